"""Keep a collection in step with its source: list what the source holds, add what is new, update what changed,
remove what is gone (its document, chunks and file). An item is changed only when its content's SHA-256 differs
from the last one synced (or a listing's ETag differs and then the content does): unchanged content is never
re-embedded. A changed item's file is written to the documents bucket under its document's key, so the ingest
pipeline (`ObjectCreated` → queue → `ingest.py`) parses, chunks and embeds it like an upload, with every limit.

The document row is committed before its file is written (the upload event finds it), and an item's hash is
recorded only once its file is written (a failed write is retried by the next sync). A whole sync runs in bounded
chunks, one invocation each (`source_chunks.py`)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections import Counter
from datetime import UTC, datetime
from typing import Any, Literal
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.knowledge import objects, sources_store, store
from personal_agent.knowledge.connectors import connector_for
from personal_agent.knowledge.connectors.base import Connector, Fetched, ItemFailed, RemoteItem
from personal_agent.knowledge.formats import MAX_UPLOAD_BYTES, format_of
from personal_agent.knowledge.sources_store import Item, Source
from personal_agent.knowledge.transaction import worker_transaction

log = logging.getLogger("personal_agent.knowledge.sources")
Outcome = Literal["added", "updated", "unchanged", "removed", "failed"]
MAX_ERRORS = 20


async def _source(org_id: UUID, source_id: UUID) -> Source | None:
    async with worker_transaction(org_id) as conn:
        return await sources_store.get(conn, source_id)


def _put(key: str, data: bytes, content_type: str) -> None:
    aws_client("s3").put_object(Bucket=objects.bucket(), Key=key, Body=data, ContentType=content_type)


async def _write(source: Source, key: str, fetched: Fetched, digest: str, web: bool) -> Outcome:
    """Create or update the item's document, then write its file (the upload event ingests it)."""
    async with worker_transaction(source.org_id) as conn:
        item = await sources_store.lock_item(conn, source.org_id, source.id, key)
        if item.content_hash == digest and item.document_id is not None:
            return "unchanged"  # a concurrent sync of the same item wrote it first
        doc = await store.get_document(conn, item.document_id) if item.document_id else None
        if doc is not None:
            doc = await store.replace_source_file(conn, doc["id"], len(fetched.data), fetched.content_type)
            outcome: Outcome = "updated"
        else:
            doc = await store.insert_source_document(conn, _values(source, fetched), source.id, web)
            outcome = "added"
        assert doc is not None
        await sources_store.set_item(conn, source.id, key, doc["id"], item.content_hash, item.etag, item.last_modified)
    await asyncio.to_thread(_put, doc["object_key"], fetched.data, fetched.content_type)
    async with worker_transaction(source.org_id) as conn:
        await sources_store.lock_item(conn, source.org_id, source.id, key)
        await sources_store.set_item(conn, source.id, key, doc["id"], digest, fetched.etag, fetched.last_modified)
    return outcome


def _values(source: Source, fetched: Fetched) -> dict[str, Any]:
    document_id = uuid.uuid4()
    filename = fetched.filename.strip()[:255] or "document"
    return {
        "id": document_id,
        "org_id": source.org_id,
        "created_by": source.created_by,
        "owner_user_id": None,
        "collection": str(source.collection_id),
        "filename": filename,
        "content_type": fetched.content_type,
        "size": len(fetched.data),
        "classification": source.classification,
        "object_key": objects.object_key(source.org_id, document_id, filename),
        "trusted": False,
    }


async def sync_item(source: Source, connector: Connector, item: RemoteItem, known: Item | None) -> Outcome:
    """Bring one object or page in step; raises `ItemFailed` for one that cannot be read or indexed."""
    if known is not None and known.document_id is not None and item.etag and item.etag == known.etag:
        return "unchanged"
    fetched = await connector.fetch(source, item, known)
    if fetched is None:
        return "unchanged"  # 304 Not Modified
    if format_of(fetched.content_type) is None:
        raise ItemFailed(f"{item.key}: {fetched.content_type} documents are not accepted")
    if not fetched.data or len(fetched.data) > MAX_UPLOAD_BYTES:
        raise ItemFailed(f"{item.key}: a document has 1 byte to {MAX_UPLOAD_BYTES} bytes")
    digest = hashlib.sha256(fetched.data).hexdigest()
    if known is not None and known.document_id is not None and known.content_hash == digest:
        async with worker_transaction(source.org_id) as conn:  # same content: remember the new validators only
            await sources_store.lock_item(conn, source.org_id, source.id, item.key)
            await sources_store.set_item(
                conn, source.id, item.key, known.document_id, digest, fetched.etag, fetched.last_modified
            )
        return "unchanged"
    return await _write(source, item.key, fetched, digest, connector.web)


async def remove_item(source: Source, key: str) -> Outcome:
    """The object or page is gone: its document, chunks (ON DELETE CASCADE) and file go too."""
    async with worker_transaction(source.org_id) as conn:
        item = await sources_store.lock_item(conn, source.org_id, source.id, key)
        deleted = await store.delete_document(conn, item.document_id) if item.document_id else None
        await sources_store.delete_item(conn, source.id, key)
    if deleted is not None:
        await asyncio.to_thread(objects.delete_object, deleted["object_key"])
    return "removed"


async def record(
    source: Source, counts: Counter[str], errors: list[dict[str, str]], *, listed: bool, chunks: int = 0
) -> dict[str, Any]:
    """Record what a sync did as the source's last sync (`chunks`: how many invocations it took)."""
    report: dict[str, Any] = {
        "at": datetime.now(UTC).isoformat(),
        "listed": listed,
        **{k: counts.get(k, 0) for k in ("added", "updated", "unchanged", "removed")},
        "failed": counts.get("failed", 0) + (0 if listed else 1),
        "errors": errors[:MAX_ERRORS],
        "chunks": chunks,
    }
    async with worker_transaction(source.org_id) as conn:
        await sources_store.record_sync(conn, source.id, report)
    log.info("source synced", extra={"source_id": str(source.id), **{k: report[k] for k in ("added", "updated")}})
    return report


async def on_object_event(bucket: str, key: str, created: bool, etag: str | None) -> list[Outcome]:
    """An `ObjectCreated`/`ObjectRemoved` event of a watched bucket: every source whose prefix holds the key syncs
    that one object (a failure is logged and counted at the next full sync)."""
    from personal_agent.db import system_transaction

    async with system_transaction() as conn:
        watching = await sources_store.sources_of_bucket(conn, bucket)
    outcomes: list[Outcome] = []
    for org_id, source_id, prefix in watching:
        source = await _source(org_id, source_id) if key.startswith(prefix) else None
        if source is None:
            continue
        if not created:
            outcomes.append(await remove_item(source, key))
            continue
        async with worker_transaction(org_id) as conn:
            known = (await sources_store.items(conn, source_id)).get(key)
        try:
            outcomes.append(await sync_item(source, connector_for("s3"), RemoteItem(key, etag), known))
        except ItemFailed as exc:
            log.warning("a source object was not synced: %s", exc, extra={"source_id": str(source_id)})
            outcomes.append("failed")
    return outcomes
