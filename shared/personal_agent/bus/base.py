"""The bus interface every backend implements (and one contract test suite checks)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from personal_agent.errors import DependencyUnavailable


@dataclass(frozen=True)
class BusEntry:
    """One stream entry: its id (the SSE `id:`) and its JSON payload."""

    id: str
    data: str


@dataclass(frozen=True)
class Published:
    """A batch's item ids, and the id of the stream's newest entry before it (`0-0`: none; None: not known)."""

    ids: list[str]
    previous: str | None


def published_reply(reply: list[object]) -> Published:
    """The publish script's reply (`bus.publish_scripts`): the newest entry before the batch, then the ids."""
    previous, *ids = (str(value) for value in reply)
    return Published(ids, previous or None)


class BusUnavailable(DependencyUnavailable):
    """The bus did not answer this once (refused, reset, timed out, restarting, a 5xx): worth another try.
    Callers that can wait retry it within `PA_DEPENDENCY_RETRY_SECONDS` (`bus.outage`); a request answers 503."""

    def __init__(self, message: str) -> None:
        super().__init__("bus", message)


class WriterBehind(Exception):
    """A writer's batch was refused because the stream lost that writer's newest items (the bus came back from an
    older copy): its newest item there is number `seq`. The writer sends what followed again (`bus.stream_writer`)."""

    def __init__(self, seq: int) -> None:
        super().__init__(f"the stream ends at this writer's item {seq}")
        self.seq = seq


BEHIND_REPLY = "PA_BEHIND"  # the publish script's error reply for it, followed by the number


def writer_behind(message: str) -> WriterBehind | None:
    """The `WriterBehind` a bus error reply means, if it is one."""
    head, _, number = message.partition(" ")
    return WriterBehind(int(number)) if head == BEHIND_REPLY and number.isdigit() else None


class EventBus(Protocol):
    """Append-only streams with replay by entry id (content only, never control), and counted slots
    (leases with an expiry) that cap how many streams one user holds open."""

    async def publish(
        self, stream: str, data: str, *, retention_seconds: int, maxlen: int, writer: str = "", seq: int = 0
    ) -> str:
        """Append `data`; trim to about `maxlen` entries; (re)set the stream's expiry; return the entry id."""
        ...

    async def publish_batch(
        self, stream: str, data: list[str], *, retention_seconds: int, maxlen: int, writer: str = "", seq: int = 0
    ) -> list[str]:
        """Append every item of `data` in order, in one round trip; trim and expire as `publish`; their entry ids.

        With `writer`, `data` are that writer's items `seq`, `seq + 1`, ...: publishing them again (a retry whose
        first attempt landed though its answer was lost) appends nothing and answers the ids they got then; a stream
        whose newest item of that writer is older than `seq - 1` (the bus lost it) refuses with `WriterBehind`."""
        ...

    async def publish_items(
        self, stream: str, data: list[str], *, retention_seconds: int, maxlen: int, writer: str, seq: int
    ) -> Published:
        """`publish_batch` as a writer, answering also the stream's newest entry before the batch when it is known
        (a first attempt: nothing of the batch had landed); `retention_seconds` 0 leaves the stream's expiry."""
        ...

    async def read(
        self, stream: str, after: str, *, block_ms: int, count: int = 100, patience_ms: int = 0
    ) -> list[BusEntry]:
        """Entries after `after` ("0" for all); wait up to `block_ms` when there are none. A backend that cannot
        block (Upstash REST polls) may notice a new entry up to `patience_ms` late, polling less often while
        nothing comes (0: as soon as it can); one that blocks answers at once whatever it is."""
        ...

    async def first_id(self, stream: str) -> str | None:
        """The oldest retained entry id, or None when the stream does not exist (expired or never written)."""
        ...

    async def last_id(self, stream: str) -> str | None:
        """The newest entry id, or None when the stream does not exist."""
        ...

    async def last_entry(self, stream: str) -> BusEntry | None:
        """The newest entry, or None when the stream does not exist."""
        ...

    async def acquire_slot(self, key: str, holder: str, *, limit: int, lease_ms: int, now_ms: int) -> int:
        """Lease one of `limit` slots under `key` to `holder` until `now_ms + lease_ms`, after dropping leases
        that ended before `now_ms`. Returns 0 when taken (or already held), else the milliseconds until the
        oldest lease ends. Leases that are never released (a crashed relay) lapse on their own."""
        ...

    async def renew_slot(self, key: str, holder: str, *, lease_ms: int, now_ms: int) -> None:
        """Extend `holder`'s lease to `now_ms + lease_ms` (re-taking it if it had lapsed)."""
        ...

    async def release_slot(self, key: str, holder: str) -> None:
        """Give `holder`'s slot back."""
        ...

    async def counter(self, key: str) -> int:
        """The value of the counter `key` (0 when it was never bumped)."""
        ...

    async def bump(self, key: str, *, ttl_seconds: int | None = None) -> int:
        """Add one to the counter `key` and return the new value; with `ttl_seconds`, the key then expires."""
        ...

    async def ping(self) -> bool:
        """True when the backend answers."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
