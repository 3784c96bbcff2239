"""Stop is an action: a cancel flag (Postgres) the engine checks between stream chunks, with an
in-process fast path for inline runs in the same process. A disconnecting client never sets it."""

from __future__ import annotations

import time
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.runs import store

_local: set[str] = set()
POLL_SECONDS = 0.25


class RunCancelled(Exception):
    """The run's owner asked it to stop."""


def signal_local_cancel(run_id: UUID | str) -> None:
    _local.add(str(run_id))


def clear_local_cancel(run_id: UUID | str) -> None:
    _local.discard(str(run_id))


class CancelWatch:
    """Checks the cancel flag at most every POLL_SECONDS (always when `force`)."""

    def __init__(self, run_id: UUID, org_id: UUID) -> None:
        self.run_id = run_id
        self.org_id = org_id
        self._next_poll = 0.0

    async def check(self, force: bool = False) -> None:
        if str(self.run_id) in _local:
            raise RunCancelled()
        now = time.monotonic()
        if not force and now < self._next_poll:
            return
        self._next_poll = now + POLL_SECONDS
        async with org_transaction(self.org_id) as conn:
            if await store.cancel_requested(conn, self.run_id):
                raise RunCancelled()
