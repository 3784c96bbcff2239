"""The most text one document may yield: a parser spends its budget as it extracts and stops at the cap, so a
document built to expand (a compressed stream drawn on every page, a zip bomb) ends `failed: too_large` before
its text fills the worker's memory."""

from __future__ import annotations

from personal_agent.knowledge.parsing.sections import UnreadableDocument

MAX_CHARS = 4_000_000
"""About 1,600 pages of dense text (ingest reads `PA_INGEST_MAX_CHARS`)."""


def too_large(message: str) -> UnreadableDocument:
    """The stable `too_large` failure the API shows; the document is left with no chunks."""
    return UnreadableDocument("too_large", message)


class TextBudget:
    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.left = max_chars

    def spend(self, text: str) -> str:
        """`text`, counted; `too_large` once the document's text passes the cap."""
        self.left -= len(text)
        if self.left < 0:
            raise too_large(f"the document has more than {self.max_chars} characters of text")
        return text
