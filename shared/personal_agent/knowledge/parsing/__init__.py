"""Documents to text sections (a page number or a heading each), one small module per format."""

from __future__ import annotations

from personal_agent.knowledge.formats import Format
from personal_agent.knowledge.parsing.budget import MAX_CHARS, TextBudget
from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument

__all__ = ["MAX_CHARS", "Section", "UnreadableDocument", "parse"]


def parse(fmt: Format, data: bytes, max_chars: int = MAX_CHARS) -> list[Section]:
    """The document's text as sections; `UnreadableDocument` (a reason for the user) when it cannot be read, or
    `too_large` past `max_chars` characters of text."""
    budget = TextBudget(max_chars)
    if fmt == "pdf":
        from personal_agent.knowledge.parsing.pdf import parse_pdf

        sections = parse_pdf(data, budget)
    elif fmt == "docx":
        from personal_agent.knowledge.parsing.docx import parse_docx

        sections = parse_docx(data, budget)
    elif fmt == "html":
        from personal_agent.knowledge.parsing.html import parse_html

        sections = parse_html(data)
    else:
        from personal_agent.knowledge.parsing.text import parse_markdown, parse_text

        sections = parse_markdown(data) if fmt == "markdown" else parse_text(data)
    if fmt in ("html", "markdown", "text"):  # at most the file's size (25 MB): counted once, after
        for section in sections:
            budget.spend(section.text)
    sections = [s for s in sections if s.text.strip()]
    if not sections:
        raise UnreadableDocument("no_text", "the document has no text that could be extracted")
    return sections
