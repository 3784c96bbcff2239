"""A source's sync in bounded chunks, so a 10k-page sitemap never needs one long invocation (migration 0044).

`start` lists the source once and marks each listed item with the sync's id (and the listing's ETag). Each
`advance` then brings at most `PA_KNOWLEDGE_SYNC_CHUNK` listed items in step, or removes as many items the listing
no longer has, keeps the counts so far in the source's `sync_cursor`, and queues the next chunk on the ingest queue
(retried and dead-lettered like any job; without a queue it goes on in this process). When nothing is left, the
report is recorded as the source's last sync. A second sync is not started while one is moving; one whose cursor
has not moved for `STALE_SECONDS` (its invocation died) is started afresh by the next request or schedule."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.knowledge import sources_store
from personal_agent.knowledge.connectors import connector_for
from personal_agent.knowledge.connectors.base import Connector, ItemFailed, RemoteItem
from personal_agent.knowledge.source_events import sync_job_body
from personal_agent.knowledge.source_sync import MAX_ERRORS, record, remove_item, sync_item
from personal_agent.knowledge.sources_store import Source
from personal_agent.knowledge.transaction import worker_transaction
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.knowledge.sources")
STALE_SECONDS = 900


def _moving(cursor: dict[str, Any] | None, now: datetime) -> bool:
    return cursor is not None and now - datetime.fromisoformat(cursor["moved"]) < timedelta(seconds=STALE_SECONDS)


async def start(source: Source, connector: Connector) -> UUID | None:
    """List the source and begin a sync (its id); None while another sync is moving. Raises `ItemFailed` when
    the source cannot be listed."""
    async with worker_transaction(source.org_id) as conn:
        if _moving(await sources_store.cursor(conn, source.id), datetime.now(UTC)):
            return None
    remote = await connector.list_items(source)
    run, now = uuid.uuid4(), datetime.now(UTC)
    async with worker_transaction(source.org_id) as conn:
        if _moving(await sources_store.cursor(conn, source.id, lock=True), now):
            return None
        await sources_store.mark_listed(conn, source.org_id, source.id, run, [(i.key, i.etag) for i in remote])
        state = {"run": str(run), "started": now.isoformat(), "moved": now.isoformat(), "chunks": 0}
        await sources_store.set_cursor(conn, source.id, state | {"counts": {}, "errors": []})
    return run


async def _chunk(source: Source, connector: Connector, run: UUID, state: dict[str, Any]) -> tuple[Counter[str], int]:
    """Bring one chunk in step: what happened to each item, and how many items it took."""
    size = get_settings().knowledge_sync_chunk
    counts: Counter[str] = Counter(state["counts"])
    errors: list[dict[str, str]] = state["errors"]
    async with worker_transaction(source.org_id) as conn:
        todo = await sources_store.listed_to_do(conn, source.id, run, size)
        started = datetime.fromisoformat(state["started"])
        gone = await sources_store.unlisted(conn, source.id, run, started, size - len(todo)) if len(todo) < size else []
    for item, etag in todo:
        try:
            counts[await sync_item(source, connector, RemoteItem(item.item_key, etag), item)] += 1
        except ItemFailed as exc:
            counts["failed"] += 1
            errors.append({"item": item.item_key, "message": str(exc)[:300]})
        async with worker_transaction(source.org_id) as conn:
            await sources_store.mark_done(conn, source.id, item.item_key, run)
    for key in gone:
        counts[await remove_item(source, key)] += 1
    state["errors"] = errors[:MAX_ERRORS]
    return counts, len(todo) + len(gone)


def _current(state: dict[str, Any] | None, run: UUID, step: int) -> bool:
    return state is not None and state["run"] == str(run) and int(state["chunks"]) == step


async def advance(source: Source, connector: Connector, run: UUID, step: int = 0) -> dict[str, Any] | None:
    """The sync's chunk after its first `step`; its report when it finished, else its progress (None: not the sync
    in progress, or that chunk is done: a duplicate or late delivery of its job)."""
    async with worker_transaction(source.org_id) as conn:
        state = await sources_store.cursor(conn, source.id)
    if state is None or not _current(state, run, step):
        return None
    counts, taken = await _chunk(source, connector, run, state)
    more = taken >= get_settings().knowledge_sync_chunk
    chunks = step + 1
    moved: dict[str, Any] = {"moved": datetime.now(UTC).isoformat(), "chunks": chunks, "counts": dict(counts)}
    async with worker_transaction(source.org_id) as conn:
        if not _current(await sources_store.cursor(conn, source.id, lock=True), run, step):
            return None  # a twin delivery of this chunk's job finished it first: its counts stand
        await sources_store.set_cursor(conn, source.id, state | moved if more else None)
    if not more:
        return await record(source, counts, state["errors"], listed=True, chunks=chunks)
    if get_settings().ingest_queue_url:
        await asyncio.to_thread(_queue_next, source, run, chunks)
        return state | moved
    return await advance(source, connector, run, chunks)  # no queue (a script, a test): go on here


async def sync_source(org_id: UUID, source_id: UUID, run: UUID | None = None, step: int = 0) -> dict[str, Any] | None:
    """One invocation's share of a sync: without `run`, list the source and start one (or report the one moving);
    with it, that sync's chunk after its first `step`. The report when it finished, else its progress (None: no
    such source, or not the sync in progress)."""
    async with worker_transaction(org_id) as conn:
        source = await sources_store.get(conn, source_id)
    if source is None:
        return None
    connector = connector_for(source.kind)
    if run is None:
        try:
            started = await start(source, connector)
        except ItemFailed as exc:  # the listing failed: nothing else was tried
            return await record(source, Counter(), [{"item": source.url or source.prefix, "message": str(exc)}],
                                listed=False)  # fmt: skip
        if started is None:
            async with worker_transaction(org_id) as conn:
                return await sources_store.cursor(conn, source_id)  # the sync moving goes on
        run, step = started, 0
    return await advance(source, connector, run, step)


def _queue_next(source: Source, run: UUID, step: int) -> None:
    body = sync_job_body(source.org_id, source.id, run, step)
    aws_client("sqs").send_message(QueueUrl=get_settings().ingest_queue_url, MessageBody=body)
