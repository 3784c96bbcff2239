"""DOCX with python-docx (pure Python on lxml, ~1 MB): paragraphs grouped under their Heading-styled paragraph,
tables read row by row."""

from __future__ import annotations

import io
import zipfile

from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument


def parse_docx(data: bytes) -> list[Section]:
    import docx
    from docx.opc.exceptions import PackageNotFoundError

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
        style = paragraph.style.name if paragraph.style is not None else ""
        text = paragraph.text.strip()
        if style.startswith(("Heading", "Title")) and text:
            flush()
            heading = text
        elif text:
            lines.append(text)
    flush()
    for table in document.tables:
        rows = [" | ".join(cell.text.strip() for cell in row.cells) for row in table.rows]
        sections.append(Section("\n".join(rows), heading=heading))
    return sections
