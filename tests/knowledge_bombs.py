"""Malicious documents made in the test (issue 28, item 8): a small DOCX whose one part inflates to a huge text, and
a small PDF whose pages all draw the same content stream. Both are the shapes reproduced against `pa dev`."""

from __future__ import annotations

import io
import os
import zipfile
import zlib

from tests.knowledge import make_docx

SENTENCE = "The quarterly report lists every expense and every refund of the travel budget. "


def docx_bomb(paragraphs: int = 290_000) -> bytes:
    """A valid DOCX (python-docx opens it) of ~145 KB whose word/document.xml inflates ~1,000 times: the same
    paragraph `paragraphs` times."""
    base = io.BytesIO(make_docx([("Report", "Summary.")]))
    paragraph = f"<w:p><w:r><w:t>{SENTENCE}</w:t></w:r></w:p>".encode()
    out = io.BytesIO()
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                head, _, tail = data.partition(b"<w:body>")
                data = head + b"<w:body>" + paragraph * paragraphs + tail
            target.writestr(item.filename, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return out.getvalue()


def memory_hog_docx(paragraphs: int = 1_400_000) -> bytes:
    """A DOCX within the archive limits (ratio ~3, ~40 MB unpacked for the default) whose empty paragraphs need far
    more memory to parse than their bytes (lxml nodes and python-docx's proxies: ~600 MB in-process), around one
    paragraph of text."""
    base = io.BytesIO(make_docx([("Report", "The real text.")]))
    ids = os.urandom(paragraphs * 4).hex()
    empty = "".join(f'<w:p w:rsidR="{ids[i : i + 8]}"/>' for i in range(0, len(ids), 8)).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                head, _, tail = data.partition(b"<w:body>")
                data = head + b"<w:body>" + empty + tail
            target.writestr(item.filename, data, compresslevel=1)
    return out.getvalue()


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF file of `objects` (object i + 1 is objects[i]) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def shared_stream_pdf(pages: int = 730, lines: int = 1300) -> bytes:
    """A ~70 KB PDF of `pages` pages that all draw one compressed content stream of `lines` lines of text (font and
    media box inherited from the page tree, so a page object is ~70 bytes)."""
    text = b"".join(
        b"BT /F1 10 Tf 40 %d Td (%s) Tj ET\n" % (800 - i % 80 * 10, SENTENCE.encode()) for i in range(lines)
    )
    stream = zlib.compress(text, 9)
    first_page = 5
    kids = b" ".join(b"%d 0 R" % (first_page + i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count %d /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Kids [%s] >>"
        % (pages, kids),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    objects += [b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>"] * pages
    return _pdf(objects)


def inflating_stream_pdf(inflated_bytes: int = 160_000_000) -> bytes:
    """A one-page PDF (~160 KB) whose content stream of text inflates past pypdf's 75 MB output limit."""
    line = b"BT /F1 10 Tf (%s) Tj ET\n" % SENTENCE.encode()
    stream = zlib.compress(line * (inflated_bytes // len(line)), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count 1 /MediaBox [0 0 595 842] /Kids [4 0 R] /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Page /Parent 2 0 R /Contents 3 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return _pdf(objects)
