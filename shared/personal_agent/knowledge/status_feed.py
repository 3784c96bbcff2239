"""A document's status changes, announced on its uploader's feed (a CUSTOM `document_status` event), so a page
can follow uploads without polling; `GET /api/v1/knowledge/documents/{id}` stays the source of truth."""

from __future__ import annotations

from typing import Any

from personal_agent.bus import feed


async def announce_status(document: dict[str, Any], *, embedding_model: str | None = None) -> None:
    """Best effort: a bus outage never fails an ingest (the status is in Postgres). `embedding_model`: announced
    after a re-embed with that model."""
    value = {
        "document_id": str(document["id"]),
        "collection": document["collection"],
        "status": document["status"],
        "error": {"code": document["error_code"], "message": document["error_message"]}
        if document.get("error_code")
        else None,
        "chunk_count": document.get("chunk_count", 0),
    }
    if embedding_model is not None:
        value["embedding_model"] = embedding_model
    await feed.announce(document["org_id"], document["created_by"], "document_status", value)
