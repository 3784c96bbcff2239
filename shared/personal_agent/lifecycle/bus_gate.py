"""A new run is refused (503 `dependency_unavailable`, `Retry-After`) while the event bus is down, rather than
accepted and left to pause at its first event: one PING with a short timeout, its answer shared for a second by
every launch of the process, so the hot path pays at most one round trip a second. (The database needs no gate:
the launch's own transaction answers the same 503 within `PA_DATABASE_POOL_TIMEOUT_SECONDS`.)"""

from __future__ import annotations

import asyncio
import time

from personal_agent.bus import get_bus
from personal_agent.errors import DependencyUnavailable

PING_TIMEOUT_SECONDS = 1.0
ANSWER_SECONDS = 1.0
RETRY_AFTER_SECONDS = 5.0
_last: tuple[float, bool] | None = None  # when the bus last answered a gate's PING (monotonic), and whether it did


async def require_bus() -> None:
    """Raise `DependencyUnavailable("bus")` when the bus did not answer a PING within the last second."""
    global _last
    if _last is None or time.monotonic() - _last[0] > ANSWER_SECONDS:
        answered = await _answers()
        _last = (time.monotonic(), answered)  # from the answer: a PING that timed out is not asked again at once
    if not _last[1]:
        raise DependencyUnavailable(
            "bus", "the event bus is unavailable: the run was not started", retry_after=RETRY_AFTER_SECONDS
        )


async def _answers() -> bool:
    try:
        return await asyncio.wait_for(get_bus().ping(), PING_TIMEOUT_SECONDS)
    except Exception:  # refused, reset, timed out: the bus is down for this purpose
        return False


def forget() -> None:
    """Drop the shared answer (tests that take the bus away and bring it back)."""
    global _last
    _last = None
