"""Malicious documents made in the test (issue 28, item 8): a small DOCX whose one part inflates to a huge text, and
a small PDF whose pages all draw the same content stream. Both are the shapes reproduced against `pa dev`."""

from __future__ import annotations

import io
import os
import random
import re
import zipfile
import zlib
from collections.abc import Callable

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


def _rewritten(data: bytes, part: str, change: Callable[[bytes], bytes], level: int = 9) -> bytes:
    """An Office archive with one part changed, every part deflated at `level`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            body = source.read(item.filename)
            target.writestr(item.filename, change(body) if item.filename == part else body, compresslevel=level)
    return out.getvalue()


def xlsx_declared_grid(rows: int = 200) -> bytes:
    """A workbook of `rows` short rows whose sheet declares the largest grid there is (`A1:XFD1048576`): padded to
    the declared width, every row would be 16,384 cells."""
    from openpyxl import Workbook  # type: ignore[import-untyped]

    book = Workbook()
    book.active.append(["Item", "Price"])
    for n in range(1, rows):
        book.active.append([f"item {n}", n])
    out = io.BytesIO()
    book.save(out)
    return _rewritten(
        out.getvalue(),
        "xl/worksheets/sheet1.xml",
        lambda xml: re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1:XFD1048576"', xml),
    )


def xlsx_spread_grid(rows: int = 200) -> bytes:
    """A ~10 KB workbook whose `rows` rows each hold a cell in the first and in the last column (XFD): 16,384 cells
    a row to read."""
    from openpyxl import Workbook

    book = Workbook()
    for n in range(1, rows + 1):
        book.active.cell(row=n, column=1, value=f"row {n}")
        book.active.cell(row=n, column=16384, value=n)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def xlsx_many_sheets(sheets: int) -> bytes:
    """A workbook of `sheets` sheets of one row each."""
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    for n in range(sheets):
        book.create_sheet(f"S{n}").append([f"sheet {n}"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def xlsx_bomb(rows: int = 300_000) -> bytes:
    """A ~100 KB workbook whose sheet XML inflates ~1,000 times: the same row of text `rows` times."""
    from tests.knowledge_formats import make_xlsx

    row = f'<row><c t="inlineStr"><is><t>{SENTENCE}</t></is></c></row>'.encode()
    return _rewritten(
        make_xlsx([("Note",), ("first",)]),
        "xl/worksheets/sheet1.xml",
        lambda xml: re.sub(
            rb"<sheetData>.*</sheetData>", b"<sheetData>" + row * rows + b"</sheetData>", xml, flags=re.S
        ),
    )


def pptx_many_slides(slides: int) -> bytes:
    """A valid deck of `slides` blank slides (python-pptx opens it), made by copying one slide's parts: python-pptx
    itself takes minutes to add thousands."""
    from pptx import Presentation

    deck = Presentation()
    deck.slides.add_slide(deck.slide_layouts[6])
    first = io.BytesIO()
    deck.save(first)
    source = zipfile.ZipFile(io.BytesIO(first.getvalue()))
    numbers = range(2, slides + 1)
    ns = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    rels = "".join(
        f'<Relationship Id="rId{1000 + n}" Type="{ns}/slide" Target="slides/slide{n}.xml"/>' for n in numbers
    )
    ids = "".join(f'<p:sldId id="{300 + n}" r:id="rId{1000 + n}"/>' for n in numbers)
    kind = "application/vnd.openxmlformats-officedocument.presentationml.slide+xml"
    types = "".join(f'<Override PartName="/ppt/slides/slide{n}.xml" ContentType="{kind}"/>' for n in numbers)
    changed = {
        "ppt/_rels/presentation.xml.rels": (b"</Relationships>", rels.encode() + b"</Relationships>"),
        "ppt/presentation.xml": (b"</p:sldIdLst>", ids.encode() + b"</p:sldIdLst>"),
        "[Content_Types].xml": (b"</Types>", types.encode() + b"</Types>"),
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            body = source.read(name)
            target.writestr(name, body.replace(*changed[name]) if name in changed else body)
        for n in numbers:
            target.writestr(f"ppt/slides/slide{n}.xml", source.read("ppt/slides/slide1.xml"))
            target.writestr(f"ppt/slides/_rels/slide{n}.xml.rels", source.read("ppt/slides/_rels/slide1.xml.rels"))
    return out.getvalue()


def pptx_bomb(paragraphs: int = 300_000) -> bytes:
    """A ~100 KB deck whose one slide's XML inflates ~1,000 times: the same paragraph `paragraphs` times."""
    from tests.knowledge_formats import make_pptx

    paragraph = f"<a:p><a:r><a:t>{SENTENCE}</a:t></a:r></a:p>".encode()
    return _rewritten(
        make_pptx([("Plan", "Ship it.", "No notes.")]),
        "ppt/slides/slide1.xml",
        lambda xml: xml.replace(b"</a:p>", b"</a:p>" + paragraph * paragraphs, 1),
    )


def pptx_oversized(unpacked: int = 70 * 1024 * 1024) -> bytes:
    """A deck under the upload limit whose slide XML unpacks to `unpacked` bytes of varied words (compressed ~8
    times: no ratio gives it away, only the unpacked size)."""
    from tests.knowledge_formats import make_pptx

    words = [w.encode() for w in "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()]
    rng = random.Random(36)
    block = b" ".join(rng.choices(words, k=200_000))  # ~1.2 MB, longer than deflate's 32 KB window: no repeats seen
    text = block * (unpacked // len(block) + 1)
    return _rewritten(
        make_pptx([("Plan", "Ship it.", "No notes.")]),
        "ppt/slides/slide1.xml",
        lambda xml: xml.replace(b"Ship it.", text, 1),
        level=1,
    )
