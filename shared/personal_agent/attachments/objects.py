"""Attachment objects live in the documents bucket under `attachments/{org_id}/{attachment_id}/{name}`, outside
the `documents/` prefix the ingest queue listens on; the bucket's client, presigned POST and GET, reads and deletes
are the knowledge base's (`knowledge/objects.py`)."""

from __future__ import annotations

import re
from typing import Any
from uuid import UUID

from personal_agent.knowledge import objects as bucket_objects

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def object_key(org_id: UUID, attachment_id: UUID, filename: str) -> str:
    """The org first, so a bucket policy or a listing can be scoped to it."""
    name = _UNSAFE.sub("_", filename).strip("._")[:120] or "file"
    return f"attachments/{org_id}/{attachment_id}/{name}"


def presigned_post(key: str, content_type: str, size: int) -> dict[str, Any]:
    """`{url, fields}` for the browser's form POST: this key, this type, at most `size` bytes."""
    upload = bucket_objects.presigned_upload(key, content_type, size)
    return {"url": upload["url"], "fields": upload["fields"]}


def presigned_get(key: str, content_type: str, disposition: str) -> dict[str, Any]:
    """`{url, expires_in}`: a short-lived GET of the object, answered with this type and disposition."""
    return bucket_objects.presigned_download(key, content_type, disposition)


def uploaded_size(key: str) -> int | None:
    """The size of the uploaded object (not downloaded), or None when nothing is there yet."""
    found = bucket_objects.read_object(key, max_bytes=0)
    return found.size if found is not None else None


def read(key: str, max_bytes: int) -> bytes | None:
    """The object's bytes, or None when it is gone (or larger than `max_bytes`)."""
    found = bucket_objects.read_object(key, max_bytes)
    return found.data if found is not None and found.data else None


def delete(key: str) -> None:
    bucket_objects.delete_object(key)
