"""Documents to text sections (a page number or a heading each), one small module per format."""

from __future__ import annotations

import importlib

from personal_agent.knowledge.formats import Format
from personal_agent.knowledge.parsing.budget import MAX_CHARS, TextBudget
from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument

__all__ = ["MAX_CHARS", "Section", "UnreadableDocument", "parse"]

_PARSERS: dict[str, tuple[str, str]] = {
    "pdf": ("pdf", "parse_pdf"),
    "docx": ("docx", "parse_docx"),
    "csv": ("tables", "parse_csv"),
    "xlsx": ("tables", "parse_xlsx"),
    "pptx": ("slides", "parse_pptx"),
    "eml": ("email_message", "parse_eml"),
    "image": ("ocr", "parse_image"),
}
"""Formats whose parser spends the text budget as it reads: (module, function), imported when first needed."""


def parse(fmt: Format, data: bytes, max_chars: int = MAX_CHARS) -> list[Section]:
    """The document's text as sections; `UnreadableDocument` (a reason for the user) when it cannot be read, or
    `too_large` past `max_chars` characters of text."""
    budget = TextBudget(max_chars)
    if fmt in _PARSERS:
        module, function = _PARSERS[fmt]
        sections: list[Section] = getattr(importlib.import_module(f"{__name__}.{module}"), function)(data, budget)
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
