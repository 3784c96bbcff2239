"""Riding out a bus outage: try again with backoff for up to `PA_DEPENDENCY_RETRY_SECONDS`, then give up with
`DependencyUnavailable` (a run pauses at its checkpoint, a stream gives its client a terminal answer).

An ElastiCache failover, an Upstash 5xx burst or a restarted Valkey lasts seconds: the waits start short
(FIRST_WAIT) and double up to MAX_WAIT, so a blink costs a blink, and a long outage a try every couple of seconds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from personal_agent.bus.base import BusUnavailable
from personal_agent.errors import DependencyUnavailable
from personal_agent.settings import get_settings

T = TypeVar("T")
FIRST_WAIT = 0.05
MAX_WAIT = 2.0

log = logging.getLogger("personal_agent.bus")


class Outage:
    """One caller's view of an outage: when it began, and how long to wait before the next try. `quiet` callers (one
    per open stream: thousands in one outage) log it at debug level; a publisher (one per run) warns."""

    def __init__(self, what: str, bound: float | None = None, *, quiet: bool = False) -> None:
        self.what = what
        self.bound = get_settings().dependency_retry_seconds if bound is None else bound
        self._level = logging.DEBUG if quiet else logging.WARNING
        self.since: float | None = None
        self._wait = FIRST_WAIT

    @property
    def ongoing(self) -> bool:
        return self.since is not None

    def failed(self, exc: BusUnavailable) -> float:
        """The seconds to wait before trying again; `DependencyUnavailable` once the outage outlasted the bound."""
        now = time.monotonic()
        if self.since is None:
            self.since = now
            message = "%s: the bus did not answer (%s); trying again for up to %.0f s"
            log.log(self._level, message, self.what, exc, self.bound)
        lasted = now - self.since
        if lasted >= self.bound:
            raise DependencyUnavailable(
                "bus",
                f"the event bus did not answer for {lasted:.0f} s ({self.what})",
                retry_after=MAX_WAIT * 5,
            ) from exc
        wait = min(self._wait, self.bound - lasted)
        self._wait = min(self._wait * 2, MAX_WAIT)
        return wait

    def over(self) -> None:
        """The bus answered again."""
        if self.since is not None:
            lasted = time.monotonic() - self.since
            log.log(min(self._level, logging.INFO), "%s: the bus answers again after %.1f s", self.what, lasted)
        self.since = None
        self._wait = FIRST_WAIT


async def ride_out(call: Callable[[], Awaitable[T]], what: str, bound: float | None = None) -> T:
    """`call()`, tried again while the bus does not answer, for up to `bound` seconds (the setting by default).
    Only for calls that are safe to repeat (a publish with a writer, a read, a slot or counter update)."""
    outage = Outage(what, bound)
    while True:
        try:
            result = await call()
        except BusUnavailable as exc:
            await asyncio.sleep(outage.failed(exc))
            continue
        outage.over()
        return result
