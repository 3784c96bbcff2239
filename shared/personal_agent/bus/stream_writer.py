"""One publisher's writes to one stream, whole across a bus that blinks: every item lands once, in order.

- A bus that does not answer is waited out (`bus.outage`, up to `PA_DEPENDENCY_RETRY_SECONDS`), then
  `DependencyUnavailable`; the batch is sent again as it was.
- A batch whose answer was lost after it landed is not written twice: the writer numbers its items and the publish
  script skips what it finds already written (`bus.publish_scripts`).
- A bus back from a copy older than what it acknowledged (a Valkey killed before its append-only file had the last
  writes, a replica promoted in a failover) lost this writer's newest items: the script says how far the stream
  still goes, and the writer sends the lost ones again from what it keeps of its last RECENT_SECONDS (at most
  RECENT_MAX items) before the batch. Readers that had them meet their last id gone and reload (`stream.relay`).
- The stream's expiry (its retention) is set on the writer's first batch, on a batch after a failure, on a `final`
  one and at most every REFRESH_SECONDS between: not an EXPIRE per batch. A stream outlives its last event by the
  retention less at most REFRESH_SECONDS.
- Every batch that landed is told to this process's readers of the stream (`bus.local_writes`).
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections import deque

from personal_agent.bus import entry_ids, local_writes
from personal_agent.bus.base import EventBus, Published, WriterBehind
from personal_agent.bus.outage import ride_out

REFRESH_SECONDS = 60.0
RECENT_SECONDS = 5.0  # more than an append-only file fsynced every second loses, or a failover's replication lag
RECENT_MAX = 2_000

log = logging.getLogger("personal_agent.bus")


class StreamWriter:
    """Publishes batches to `stream` as one writer (a fresh id per instance)."""

    def __init__(self, bus: EventBus, stream: str, *, retention_seconds: int, maxlen: int, what: str) -> None:
        self.bus = bus
        self.stream = stream
        self.retention = retention_seconds
        self.maxlen = maxlen
        self.what = what
        self.writer = uuid.uuid4().hex[:16]
        self.seq = 0  # the number of the next item
        self._recent: deque[tuple[int, str, float]] = deque()  # (number, item, sent at) of the last items sent
        self._expiry_set_at: float | None = None  # when this writer last (re)set the stream's expiry

    async def send(self, batch: list[str], *, final: bool = False) -> list[str]:
        """Publish `batch` after everything sent before; the entry ids of its items. `final`: the stream's last
        batch for now (its retention counts from it)."""
        payload, first = batch, self.seq
        while True:
            try:
                published = await ride_out(functools.partial(self._publish, payload, first, final), self.what)
            except WriterBehind as behind:
                payload, first = self._with_lost(behind.seq, batch), behind.seq + 1
                continue
            self._sent(payload, first)
            ids = published.ids
            if len(ids) == len(payload):
                local_writes.wrote(self.stream, published.previous, entry_ids.entries(ids, payload))
            return ids[len(ids) - len(batch) :]

    async def _publish(self, items: list[str], first: int, final: bool) -> Published:
        now, set_at = time.monotonic(), self._expiry_set_at
        refresh = final or set_at is None or now - set_at >= REFRESH_SECONDS
        self._expiry_set_at = None  # set again once this lands: after a failure the next try refreshes it
        published = await self.bus.publish_items(
            self.stream,
            items,
            retention_seconds=self.retention if refresh else 0,
            maxlen=self.maxlen,
            writer=self.writer,
            seq=first,
        )
        self._expiry_set_at = now if refresh else set_at
        return published

    def _with_lost(self, kept: int, batch: list[str]) -> list[str]:
        """The items after number `kept` this writer still has, then `batch` (numbered on from `kept + 1`)."""
        lost = [item for number, item, _ in self._recent if number > kept]
        if len(lost) < self.seq - 1 - kept:
            log.warning("%s: the bus lost %d items, %d can be sent again", self.what, self.seq - 1 - kept, len(lost))
        else:
            log.warning("%s: the bus lost the last %d items; sending them again", self.what, len(lost))
        return lost + batch

    def _sent(self, items: list[str], first: int) -> None:
        now = time.monotonic()
        while self._recent and self._recent[-1][0] >= first:  # items sent again are numbered anew
            self._recent.pop()
        self._recent.extend((first + i, item, now) for i, item in enumerate(items))
        while self._recent and (len(self._recent) > RECENT_MAX or now - self._recent[0][2] > RECENT_SECONDS):
            self._recent.popleft()
        self.seq = first + len(items)
