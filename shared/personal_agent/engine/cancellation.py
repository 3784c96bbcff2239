"""Stop is an action: a cancel flag (Postgres) the engine checks between stream chunks, with an
in-process fast path for inline runs in the same process. A disconnecting client never sets it.

Between stream chunks the engine reads a Redis copy of the flag (one GET every POLL_SECONDS), and before every
step at once; Postgres, the source of truth, at a watch's first check (a step of a durable run, the start of a
drive), every DB_POLL_SECONDS after, and whenever Redis does not answer. Every Stop (`signal_cancel`, after the
Postgres flag is set) copies the flag to Redis, so a Stop reaches a run in another process within POLL_SECONDS
and before its next step; only a flag whose Redis copy failed waits for the next Postgres read (DB_POLL_SECONDS).
A step of a short run therefore reads Redis, not Postgres: one transaction less per step.
"""

from __future__ import annotations

import logging
import time
from uuid import UUID

from personal_agent.bus import get_bus
from personal_agent.bus.key_names import cancel_flag
from personal_agent.db import org_transaction
from personal_agent.runs import store
from personal_agent.settings import get_settings

log = logging.getLogger(__name__)
_local: set[str] = set()
POLL_SECONDS = 1.0  # a Stop from another process lands within a second: a GET per second of streaming, not four
DB_POLL_SECONDS = 2.0


class RunCancelled(Exception):
    """The run's owner asked it to stop."""


def signal_local_cancel(run_id: UUID | str) -> None:
    _local.add(str(run_id))


async def signal_cancel(run_id: UUID | str) -> None:
    """After the Postgres flag is set: stop the run now if it runs here, and within POLL_SECONDS elsewhere."""
    signal_local_cancel(run_id)
    try:
        await get_bus().bump(cancel_flag(run_id), ttl_seconds=get_settings().event_retention_seconds)
    except Exception as exc:  # the Postgres flag still stops it, within DB_POLL_SECONDS
        log.warning("could not set the cancel flag in Redis (%s)", type(exc).__name__)


async def stopped_while_waiting(run_id: UUID, org_id: UUID) -> bool:
    """Whether a Stop came while the run began to wait for a person: its cancel found it `running` (so left its end
    to the engine), but the engine checks the flag only between nodes, and a waiting run is ended by the cancel.
    Read after the wait is committed; the cancel reads the status after its flag is committed
    (`lifecycle.run_views.cancel`), so one of the two always ends it (a durable run's execution is stopped)."""
    async with org_transaction(org_id) as conn:
        row = await store.get_run(conn, run_id)
    return row is not None and bool(row.cancel_requested) and row.status == "waiting"


def clear_local_cancel(run_id: UUID | str) -> None:
    _local.discard(str(run_id))


class CancelWatch:
    """Checks the cancel flag at most every POLL_SECONDS (Redis; at once when `force`) and DB_POLL_SECONDS
    (Postgres; at the first check, and whenever Redis fails)."""

    def __init__(self, run_id: UUID, org_id: UUID) -> None:
        self.run_id = run_id
        self.org_id = org_id
        self._key = str(run_id)  # checked between every two stream chunks
        self._next_poll = 0.0
        self._next_db_poll = 0.0

    def read_from_db(self, requested: bool | None) -> None:
        """The flag as a statement of this drive just read it from Postgres (`store.mark_running`): an unset flag
        need not be read there again for DB_POLL_SECONDS (Redis and this process are still checked)."""
        if requested is False:
            self._next_db_poll = time.monotonic() + DB_POLL_SECONDS

    async def check(self, force: bool = False) -> None:
        if self._key in _local:
            raise RunCancelled()
        now = time.monotonic()
        if not force and now < self._next_poll:
            return
        self._next_poll = now + POLL_SECONDS
        if now < self._next_db_poll:
            try:
                if await get_bus().counter(cancel_flag(self.run_id)):
                    raise RunCancelled()
                return
            except RunCancelled:
                raise
            except Exception as exc:  # no Redis answer: ask Postgres
                log.warning("could not read the cancel flag in Redis (%s)", type(exc).__name__)
        self._next_db_poll = now + DB_POLL_SECONDS
        async with org_transaction(self.org_id) as conn:
            if await store.cancel_requested(conn, self.run_id):
                raise RunCancelled()
