"""Riding out a database outage: a whole unit of work is tried again, with backoff, while Postgres is unreachable
(a restart, a failover, `admin_shutdown`, `cannot_connect_now`, a write refused read-only), for at most
`PA_DEPENDENCY_RETRY_SECONDS`; past that the caller gets `DependencyUnavailable("database")`, and a run's driver
pauses the run at its last checkpoint.

Only a unit that is safe to replay may go through `retrying`: one that opens its own transaction (a transaction is
only ever retried whole; a body cannot be re-run from inside `org_transaction`) and whose writes are idempotent
(a checkpoint and a ledger row are `ON CONFLICT DO NOTHING`; a run ends once), since a commit whose answer was
lost may have happened.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from personal_agent.errors import DependencyUnavailable, dependency_outage
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.db")
T = TypeVar("T")
FIRST_DELAY = 0.1
MAX_DELAY = 5.0


async def retrying(unit: Callable[[], Awaitable[T]], *, what: str, bound: float | None = None) -> T:
    """Await `unit()` until it succeeds, trying again after a database outage with jittered exponential backoff
    (0.1 s doubling to 5 s) for at most `bound` seconds (default `PA_DEPENDENCY_RETRY_SECONDS`). Any other error,
    and an outage of another dependency (the bus), passes at once. `what` names the unit in the log."""
    limit = get_settings().dependency_retry_seconds if bound is None else bound
    deadline = time.monotonic() + limit
    delay = FIRST_DELAY
    attempt = 0
    while True:
        attempt += 1
        try:
            return await unit()
        except Exception as exc:
            outage = dependency_outage(exc)
            if outage is None or outage.dependency != "database":
                raise
            wait = random.uniform(delay / 2, delay)  # jitter: many runs back at once do not retry in step
            if time.monotonic() + wait >= deadline:
                log.warning("the database stayed unavailable: %s not written", what, extra={"attempts": attempt})
                raise DependencyUnavailable(
                    "database", f"the database stayed unavailable for {limit:g} s", retry_after=outage.retry_after
                ) from exc
            log.info("the database is unavailable; %s is tried again", what, extra={"attempt": attempt})
            await asyncio.sleep(wait)
            delay = min(MAX_DELAY, delay * 2)
