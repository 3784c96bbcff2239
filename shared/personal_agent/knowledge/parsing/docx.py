"""DOCX with python-docx (pure Python on lxml, ~1 MB): paragraphs grouped under their Heading-styled paragraph,
tables read row by row. The zip's central directory is checked first (a zip bomb is refused unread)."""

from __future__ import annotations

import io
import zipfile

from personal_agent.knowledge.parsing.budget import TextBudget, too_large
from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument

MAX_UNPACKED_BYTES = 64 * 1024 * 1024
"""Every part together, uncompressed: python-docx loads them all (a 1,000-page text is ~20 MB of XML)."""
MAX_RATIO = 100
"""Uncompressed over compressed size of one part; Word's XML packs 5-20 times, a bomb ~1,000 times."""
RATIO_FROM_BYTES = 1024 * 1024  # a small part cannot hurt, whatever its ratio
MAX_PARTS = 5000


def check_archive(data: bytes, kind: str = "DOCX") -> None:
    """Refuse from the central directory alone. zipfile never inflates a part past the size the directory declares
    (and then fails its CRC), so the declared sizes bound what python-docx (openpyxl, python-pptx) can unpack."""
    try:
        parts = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise UnreadableDocument("corrupt", f"the {kind} could not be read ({type(exc).__name__})") from None
    if len(parts) > MAX_PARTS:
        raise too_large(f"the {kind} has more than {MAX_PARTS} parts")
    if sum(p.file_size for p in parts) > MAX_UNPACKED_BYTES:
        raise too_large(f"the {kind} unpacks to more than {MAX_UNPACKED_BYTES // (1024 * 1024)} MB")
    for part in parts:
        if part.file_size > RATIO_FROM_BYTES and part.file_size > MAX_RATIO * max(part.compress_size, 1):
            raise too_large(f"the {kind} part {part.filename[:100]!r} is compressed more than {MAX_RATIO} times")


def parse_docx(data: bytes, budget: TextBudget) -> list[Section]:
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    check_archive(data)
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UnreadableDocument("corrupt", f"the DOCX could not be read ({type(exc).__name__})") from None
    sections: list[Section] = []
    heading: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if lines:
            sections.append(Section("\n".join(lines), heading=heading))
            lines.clear()

    for paragraph in document.paragraphs:
        text = budget.spend(paragraph.text.strip())
        if not text:
            continue
        style = paragraph.style.name if paragraph.style is not None else ""  # a lookup: only for text
        if style.startswith(("Heading", "Title")):
            flush()
            heading = text
        else:
            lines.append(text)
    flush()
    for table in document.tables:
        rows = [" | ".join(budget.spend(cell.text.strip()) for cell in row.cells) for row in table.rows]
        sections.append(Section("\n".join(rows), heading=heading))
    return sections
