"""Documents to text sections (a page number or a heading each), one small module per format."""

from __future__ import annotations

from personal_agent.knowledge.formats import Format
from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument

__all__ = ["Section", "UnreadableDocument", "parse"]


def parse(fmt: Format, data: bytes) -> list[Section]:
    """The document's text as sections; `UnreadableDocument` (a reason for the user) when it cannot be read."""
    if fmt == "pdf":
        from personal_agent.knowledge.parsing.pdf import parse_pdf

        sections = parse_pdf(data)
    elif fmt == "docx":
        from personal_agent.knowledge.parsing.docx import parse_docx

        sections = parse_docx(data)
    elif fmt == "html":
        from personal_agent.knowledge.parsing.html import parse_html

        sections = parse_html(data)
    else:
        from personal_agent.knowledge.parsing.text import parse_markdown, parse_text

        sections = parse_markdown(data) if fmt == "markdown" else parse_text(data)
    sections = [s for s in sections if s.text.strip()]
    if not sections:
        raise UnreadableDocument("no_text", "the document has no text that could be extracted")
    return sections
