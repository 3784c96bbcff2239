"""One XREAD per stream per process, fanned out in memory to every SSE client of that stream.

A stream's `Tail` reads it from the bus, blocking, from its newest entry when the first client arrived, and keeps
what it read (the last `KEEP` entries) for all of them. It reads only while a client waits for more than it
holds, so one client costs the reads it would make on its own, and what arrives meanwhile comes in one read.
A client's `read(after)` answers exactly what `bus.read` would: every entry after `after`, in order, none
skipped. A client behind what the tail holds (resuming from an older `Last-Event-ID`, or so slow the tail
dropped what it still needs) reads those entries itself, without blocking, until it has caught up. When the
last client leaves, the tail stops after its current read. A read that fails ends the tail: its clients raise the
error, and each one's relay waits the outage out and follows again (`stream.relay`), through a new tail whose
first client starts it from the stream's newest entry then.

While this process writes the stream itself (a run driven here: `bus.local_writes`), the tail takes each batch from
the writer instead of reading it back: a batch whose previous entry is the tail's last goes straight to its clients.
Anything else (a batch after one the tail missed, or none for LOCAL_WAIT_SECONDS, or the writer gone) is read from
the bus as before, so a writer elsewhere is noticed within that wait.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from personal_agent.bus import BusEntry, EventBus, entry_ids, get_bus, local_writes

KEEP = 5_000
LOCAL_WAIT_SECONDS = 5.0
READ_BLOCK_MS = 20_000
READ_COUNT = 500


class Tail:
    """The entries of one stream after `base`, read once for every client of this process."""

    def __init__(self, bus: EventBus, stream: str, base: str, patience_ms: int = 0) -> None:
        self.bus = bus
        self.stream = stream
        self.patience_ms = patience_ms
        self.base = entry_ids.key(base)  # the entries held are every entry after this id
        self.entries: list[BusEntry] = []
        self.keys: list[tuple[int, int, int]] = []
        self.cursor = base
        self.clients = 0
        self.error: BaseException | None = None
        self.arrived = asyncio.Event()
        self.wanted = asyncio.Event()  # a client waits for entries the tail does not hold yet
        self.local = asyncio.Event()  # a local writer's batch came (taken or not), or that writer ended
        self.loop = asyncio.get_running_loop()
        self.task: asyncio.Task[None] | None = None

    async def _follow(self) -> None:
        try:
            with local_writes.listening(self.stream, self._from_writer):
                while True:
                    await self.wanted.wait()
                    if self.clients <= 0:
                        break
                    self.wanted.clear()
                    if local_writes.active(self.stream) and await self._written_here():
                        continue
                    got = await self.bus.read(
                        self.stream,
                        self.cursor,
                        block_ms=READ_BLOCK_MS,
                        count=READ_COUNT,
                        patience_ms=self.patience_ms,
                    )
                    if got:
                        self._hold(got)
                    else:
                        self.wanted.set()  # the block ran out: the clients still wait
        except Exception as exc:  # the clients raise it, as their own XREAD would have
            self.error = exc
        finally:
            if _TAILS.get(self.stream) is self:
                del _TAILS[self.stream]
            self._wake()

    def _from_writer(self, previous: str | None, items: list[BusEntry]) -> None:
        """A batch this process wrote (`bus.local_writes`): held when it follows what the tail holds."""
        if items and previous is not None and entry_ids.key(previous) == entry_ids.key(self.cursor):
            self._hold(items)
        self.local.set()

    async def _written_here(self) -> bool:
        """Wait for the local writer's next batch: True when it was held (no read needed), else False (at once when
        the writer wrote more than the tail holds: a batch before the tail listened)."""
        cursor = self.cursor
        newest = local_writes.newest(self.stream)
        if newest is not None and entry_ids.key(newest) > entry_ids.key(cursor):
            return False
        self.local.clear()
        try:
            async with asyncio.timeout(LOCAL_WAIT_SECONDS):
                await self.local.wait()
        except TimeoutError:
            return False
        return self.cursor != cursor

    def _hold(self, got: list[BusEntry]) -> None:
        keys = [entry_ids.key(e.id) for e in got]
        last = self.keys[-1] if self.keys else self.base
        if keys and keys[0] <= last:  # a read that raced a local batch: none twice
            start = bisect.bisect_right(keys, last)
            got, keys = got[start:], keys[start:]
        if not got:
            return
        self.entries.extend(got)
        self.keys.extend(keys)
        self.cursor = got[-1].id
        if len(self.entries) > KEEP:
            drop = len(self.entries) - KEEP
            self.base = self.keys[drop - 1]
            del self.entries[:drop], self.keys[:drop]
        self._wake()

    def _wake(self) -> None:
        arrived, self.arrived = self.arrived, asyncio.Event()
        arrived.set()

    async def read(self, after: str, *, block_ms: int) -> list[BusEntry]:
        """The entries after `after` (at most `READ_COUNT`), waiting up to `block_ms` when there are none."""
        deadline = self.loop.time() + block_ms / 1000
        key = entry_ids.key(after)
        while True:
            if self.error is not None:
                raise self.error
            if key < self.base:  # behind what is held: catch up with reads of its own
                own = await self.bus.read(self.stream, after, block_ms=0, count=READ_COUNT)
                if own:
                    return own
            start = bisect.bisect_right(self.keys, key)
            if start < len(self.entries):
                return self.entries[start : start + READ_COUNT]
            remaining = deadline - self.loop.time()
            if remaining <= 0:
                return []
            self.wanted.set()
            try:
                async with asyncio.timeout(remaining):  # no task per wait, unlike `wait_for` on 3.11
                    await self.arrived.wait()
            except TimeoutError:
                return []


_TAILS: dict[str, Tail] = {}


@asynccontextmanager
async def follow(stream: str, patience_ms: int = 0) -> AsyncIterator[Tail]:
    """The process's tail of `stream` (started by its first client, with its `patience_ms`), held while the block
    runs."""
    bus = get_bus()
    loop = asyncio.get_running_loop()
    tail = _TAILS.get(stream)
    if tail is None or tail.bus is not bus or tail.loop is not loop or tail.error is not None:
        tail = Tail(bus, stream, await bus.last_id(stream) or "0-0", patience_ms)
        existing = _TAILS.get(stream)  # another client may have started one while we asked for the newest id
        if existing is not None and existing.bus is bus and existing.loop is loop and existing.error is None:
            tail = existing
        else:
            _TAILS[stream] = tail
    tail.clients += 1
    if tail.task is None or tail.task.done():
        tail.task = asyncio.create_task(tail._follow())
    try:
        yield tail
    finally:
        tail.clients -= 1
        if tail.clients <= 0:
            tail.wanted.set()  # its reader ends (after the read it may be in)
