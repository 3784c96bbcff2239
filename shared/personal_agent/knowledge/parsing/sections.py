"""What every parser returns: sections of text, each with where it is (page, heading)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    text: str
    page: int | None = None
    heading: str | None = None


class UnreadableDocument(Exception):
    """The document cannot be read (corrupt, encrypted, no text): it ends `failed` with this code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without a BOM), else Latin-1: text formats never fail on their encoding."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")
