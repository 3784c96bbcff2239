"""Attachments in the stored user turn: references, never bytes. The turn's content becomes
`[text, <image-url or document-url with url attachment://<id>>, ...]` (pydantic-ai's JSON, built without
importing it); the engine swaps each reference for what the model reads (`attachments/model_content.py`) in the
request only, so checkpoints, transcripts and Step Functions payloads stay small."""

from __future__ import annotations

from typing import Any
from uuid import UUID

SCHEME = "attachment://"


def reference(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "url": f"{SCHEME}{row['id']}",
        "force_download": False,
        "vendor_metadata": {"attachment_id": str(row["id"]), "name": row["filename"], "size": int(row["size"])},
        "kind": "image-url" if row["kind"] == "image" else "document-url",
        "media_type": row["content_type"],
    }


def with_attachments(request: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The user turn (`ModelRequest` JSON with one user-prompt part) with references to `rows` after its text."""
    if not rows:
        return request
    part = request["parts"][0]
    return {**request, "parts": [{**part, "content": [part["content"], *(reference(r) for r in rows)]}]}


def attachment_id(url: str) -> UUID | None:
    """The attachment a reference's URL names, or None for any other URL."""
    if not url.startswith(SCHEME):
        return None
    try:
        return UUID(url.removeprefix(SCHEME))
    except ValueError:
        return None


def described(content: Any) -> list[dict[str, Any]]:
    """The attachments of a stored user-prompt content, as the transcript shows them."""
    if not isinstance(content, list):
        return []
    out = []
    for item in content:
        meta = item.get("vendor_metadata") if isinstance(item, dict) else None
        if isinstance(meta, dict) and attachment_id(str(item.get("url", ""))) is not None:
            out.append(
                {
                    "id": str(meta.get("attachment_id", "")),
                    "name": str(meta.get("name", "")),
                    "size": int(meta.get("size", 0)),
                    "content_type": str(item.get("media_type") or ""),
                    "kind": "image" if item.get("kind") == "image-url" else "document",
                }
            )
    return out
