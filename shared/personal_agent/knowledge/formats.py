"""What may be uploaded: the content types the parsers read, the size limit, and a check of the first bytes."""

from __future__ import annotations

from typing import Literal

Format = Literal["pdf", "docx", "html", "markdown", "text", "csv", "xlsx", "pptx", "eml", "image"]

MAX_UPLOAD_BYTES = 25 * 1024 * 1024
"""The largest document accepted (25 MB): enforced by the presigned POST policy and again at ingest."""

CONTENT_TYPES: dict[str, Format] = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "text/html": "html",
    "text/markdown": "markdown",
    "text/plain": "text",
    "text/csv": "csv",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "message/rfc822": "eml",
    "image/png": "image",
    "image/jpeg": "image",
}
_ZIP = b"PK\x03\x04"
_IMAGE = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")


def format_of(content_type: str) -> Format | None:
    """The format of a content type (parameters such as `; charset=utf-8` ignored), or None if not accepted."""
    return CONTENT_TYPES.get(content_type.split(";", 1)[0].strip().lower())


def matches_content(fmt: Format, head: bytes) -> bool:
    """Whether the first bytes fit the declared format (a PDF starts with `%PDF-`, DOCX, XLSX and PPTX are ZIP
    archives, a PNG or JPEG has its signature; text formats must not look like any of them or hold NUL bytes)."""
    if fmt == "pdf":
        return head.lstrip()[:5] == b"%PDF-"
    if fmt in ("docx", "xlsx", "pptx"):
        return head[:4] == _ZIP
    if fmt == "image":
        return head.startswith(_IMAGE)
    return b"\x00" not in head and not head.startswith((b"%PDF-", _ZIP, *_IMAGE))
