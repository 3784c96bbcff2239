"""What may be attached: images a vision model reads (PNG, JPEG, GIF, WebP, at most 10 MB), and the documents
the knowledge base ingests (their own types and limit, `knowledge/formats.py`)."""

from __future__ import annotations

from typing import Literal

from personal_agent.errors import AppError, InvalidInput
from personal_agent.knowledge.formats import MAX_UPLOAD_BYTES, format_of

Kind = Literal["image", "document"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 10 * 1024 * 1024
MAX_PER_MESSAGE = 8
"""The most files one message may carry."""


def kind_of(content_type: str, size: int) -> Kind:
    """The attachment's kind; 415 `unsupported_attachment` for another type, 413 `attachment_too_large`."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in IMAGE_TYPES:
        kind: Kind = "image"
        limit = MAX_IMAGE_BYTES
    elif format_of(media) is not None:
        kind, limit = "document", MAX_UPLOAD_BYTES
    else:
        raise AppError(
            f"{media or 'this type'} cannot be attached: images (PNG, JPEG, GIF, WebP) or documents "
            "(PDF, DOCX, XLSX, PPTX, CSV, HTML, Markdown, plain text, e-mail)",
            code="unsupported_attachment",
            status=415,
        )
    if size < 1:
        raise InvalidInput("the file is empty", code="empty_attachment")
    if size > limit:
        raise AppError(
            f"the file is larger than {limit // (1024 * 1024)} MB", code="attachment_too_large", status=413, limit=limit
        )
    return kind


_SIGNATURES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
}


def looks_like(media_type: str, data: bytes) -> bool:
    """Whether the bytes are what the upload declared (a provider refuses an image that is not one)."""
    if media_type == "image/webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    return data.startswith(_SIGNATURES.get(media_type, (b"",)))
