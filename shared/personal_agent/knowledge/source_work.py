"""The sources' work of one ingest-queue message (`source_events.py` parses it): a sync job (a start, or the next
chunk of a sync in progress) or a watched bucket's object event."""

from __future__ import annotations

from personal_agent.knowledge.source_chunks import sync_source
from personal_agent.knowledge.source_events import ObjectEvent, SyncJob
from personal_agent.knowledge.source_sync import on_object_event


async def handle_source_work(work: list[SyncJob | ObjectEvent]) -> list[str]:
    outcomes: list[str] = []
    for item in work:
        if isinstance(item, SyncJob):
            report = await sync_source(item.org_id, item.source_id, item.run, item.step)
            outcomes.append("unknown_source" if report is None else "synced")
        else:
            outcomes.extend(await on_object_event(item.bucket, item.key, item.created, item.etag))
    return outcomes
