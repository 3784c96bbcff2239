"""A knowledge document's file for whoever may search it (a citation's "Open the document"): a short-lived
presigned GET on the documents bucket, not a copy through the API.

A PDF is served inline as `application/pdf`, so the browser's PDF viewer opens it and honours a `#page=N` fragment
(the cited page), and so is an image of a type a browser shows (PNG, JPEG, GIF, WebP); anything else (HTML, SVG,
text, office files, e-mail) comes as a download (`Content-Disposition: attachment`), so an uploaded page or script
never renders as a document from the bucket's origin."""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import quote
from uuid import UUID

from personal_agent.errors import AppError, Conflict
from personal_agent.knowledge import documents, objects

INLINE_TYPES = frozenset({"application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp"})
_NOT_PLAIN = re.compile(r"[^A-Za-z0-9 ._()+-]+")


def disposition_of(content_type: str, filename: str) -> tuple[str, str, str]:
    """(the served type, `inline` or `attachment`, the `Content-Disposition` value with the file's name in ASCII
    and in RFC 5987's UTF-8 form)."""
    media = content_type.split(";", 1)[0].strip().lower()
    disposition = "inline" if media in INLINE_TYPES else "attachment"
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip() or "document"
    plain = _NOT_PLAIN.sub("_", name).strip() or "document"
    header = f"{disposition}; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"
    return media or "application/octet-stream", disposition, header


async def download(org_id: UUID, user_id: UUID, document_id: UUID) -> dict[str, Any]:
    """`{url, expires_in, content_type, disposition, filename}` of a document the caller may search; 404
    `document_not_found` otherwise (another org's or a colleague's own look the same), 409 `document_not_uploaded`
    before its file arrived, 410 `document_gone` when the file is no longer stored."""
    row = await documents.get_document(org_id, user_id, document_id)
    if row["status"] == "uploading":
        raise Conflict(f"{row['filename']} has not finished uploading", code="document_not_uploaded")
    found = await asyncio.to_thread(objects.read_object, row["object_key"], 0)
    if found is None:
        raise AppError("the file is no longer stored", code="document_gone", status=410)
    content_type, disposition, header = disposition_of(row["content_type"], row["filename"])
    signed = await asyncio.to_thread(objects.presigned_download, row["object_key"], content_type, header)
    return {
        "url": signed["url"],
        "expires_in": signed["expires_in"],
        "content_type": content_type,
        "disposition": disposition,
        "filename": row["filename"],
    }
