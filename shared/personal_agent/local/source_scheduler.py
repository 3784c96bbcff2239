"""The dev server's stand-in for the knowledge sources' EventBridge schedules: `tick()` queues a sync of every
source due at `clock()` and moves its next sync on, in one transaction per source (SKIP LOCKED: one scheduler each),
like `scheduler.py` does for workflows."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from uuid import UUID

from personal_agent.db import org_transaction, system_transaction
from personal_agent.knowledge import sources_store
from personal_agent.knowledge.sources import send_sync
from personal_agent.periodic import Periodic
from personal_agent.settings import get_settings
from personal_agent.workflows.source_schedules import next_sync

log = logging.getLogger("personal_agent.local.source_scheduler")


def utc_now() -> datetime:
    return datetime.now(UTC)


class SourceScheduler(Periodic):
    def __init__(
        self, clock: Callable[[], datetime] = utc_now, interval: float | None = None, batch: int = 100
    ) -> None:
        interval = interval or get_settings().local_scheduler_interval_seconds
        super().__init__("pa-source-scheduler", interval, self.tick, log)
        self.clock = clock
        self.batch = batch

    async def tick(self) -> list[UUID]:
        """Queue the due sources' syncs; the ids of the sources queued."""
        now = self.clock()
        async with system_transaction() as conn:
            due = await sources_store.due_sources(conn, now, self.batch)
        queued: list[UUID] = []
        for org_id, source_id in due:
            async with org_transaction(org_id) as conn:
                source = await sources_store.lock_due(conn, source_id, now)
                if source is None:
                    continue
                await sources_store.set_next_sync(conn, source_id, next_sync(source.every, now, source.next_sync_at))
            await asyncio.to_thread(send_sync, org_id, source_id)
            queued.append(source_id)
        return queued
