"""A document's status changes, announced on its uploader's feed (a CUSTOM `document_status` event), so a page
can follow uploads without polling; `GET /api/v1/knowledge/documents/{id}` stays the source of truth."""

from __future__ import annotations

import logging
import time
from typing import Any

from personal_agent.bus import get_bus
from personal_agent.bus.keys import feed_stream
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.knowledge")


async def announce_status(document: dict[str, Any], *, embedding_model: str | None = None) -> None:
    """Best effort: a bus outage never fails an ingest (the status is in Postgres). `embedding_model`: announced
    after a re-embed with that model."""
    from ag_ui.core import CustomEvent

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
    event = CustomEvent(name="document_status", value=value, timestamp=int(time.time() * 1000))
    try:
        await get_bus().publish(
            feed_stream(document["org_id"], document["created_by"]),
            event.model_dump_json(by_alias=True, exclude_none=True),
            retention_seconds=get_settings().event_retention_seconds,
            maxlen=1000,
        )
    except Exception as exc:  # noqa: BLE001 - reported, never fatal
        log.warning("document status not announced: %s", type(exc).__name__)
