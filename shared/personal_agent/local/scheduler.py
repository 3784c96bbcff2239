"""The local stand-in for EventBridge Scheduler: a loop in the dev server that fires due workflow schedules.

Each due fire time is claimed in Postgres before its run starts, in one transaction that also moves the
schedule on: the row lock (SKIP LOCKED) keeps two schedulers off the same schedule, and the delivery's
unique key (workflow, fire time) keeps a restarted one from firing the same time again. A fire whose run
fails to start is recorded, not retried (at most once, like a schedule's fire time on AWS after its retries).
Fire times missed while the dev server was down fire once, at the next tick.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from uuid import UUID

from personal_agent.db import org_transaction, system_transaction
from personal_agent.errors import InvalidInput
from personal_agent.periodic import Periodic
from personal_agent.settings import get_settings
from personal_agent.workflows import schedule_store
from personal_agent.workflows.schedule_expressions import parse_schedule
from personal_agent.workflows.triggers import Accepted, claim_fire, schedule_values, start_delivery

log = logging.getLogger("personal_agent.scheduler")
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


class LocalScheduler(Periodic):
    """`tick()` fires what is due at `clock()`; `start()`/`stop()` run it every `interval` seconds."""

    def __init__(self, clock: Clock = utc_now, interval: float | None = None, batch: int = 100) -> None:
        super().__init__(
            "pa-local-scheduler", interval or get_settings().local_scheduler_interval_seconds, self.tick, log
        )
        self.clock = clock
        self.batch = batch

    async def tick(self) -> list[Accepted]:
        """Fire every schedule due now; return the runs started (or recorded as skipped) by this tick."""
        now = self.clock()
        async with system_transaction() as conn:
            cur = await conn.execute("SELECT org_id, workflow_id FROM pa_due_schedules(%s, %s)", [now, self.batch])
            due = await cur.fetchall()
        fired = []
        for row in due:
            accepted = await self._fire(row["org_id"], row["workflow_id"], now)
            if accepted is not None:
                fired.append(accepted)
        return fired

    async def _fire(self, org_id: UUID, workflow_id: UUID, now: datetime) -> Accepted | None:
        async with org_transaction(org_id) as conn:
            schedule = await schedule_store.lock_due(conn, workflow_id, now)
            if schedule is None:
                return None  # another scheduler holds it, or it already moved on
            fire_at = schedule.next_fire_at
            try:
                parsed = parse_schedule(schedule.expression, schedule.timezone)
                following: datetime | None = parsed.next_after(max(now, fire_at), anchor=schedule.anchor_at)
            except InvalidInput:
                following = None  # it never fires again
            await schedule_store.set_next_fire(conn, workflow_id, following)
            claimed = await claim_fire(conn, org_id, workflow_id, fire_at)
        if claimed is None or not claimed[1].won:
            return None
        workflow, delivery = claimed
        try:
            return await start_delivery(workflow, delivery, schedule_values(workflow, fire_at), keep_failures=True)
        except Exception:
            log.exception("a scheduled run did not start", extra={"workflow_id": str(workflow_id)})
            return None
