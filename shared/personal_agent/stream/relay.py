"""Relay bus items as Server-Sent Events, one AG-UI event per frame. Each event's `id:` is its item id
(`bus.entry_ids`: `<entry id>.<index>` inside a batch's entry, the entry id for its last event), so `Last-Event-ID`
(or `?after=`) replays exactly what a client missed, from between any two events, inside a batch or between two.

A bus that stops answering is waited out (`bus.outage`) on the open connection: the relay tries again with
backoff, sending heartbeats meanwhile, and goes on from the last entry it sent. If that entry is gone when the bus
is back (a Valkey that restarted empty or from an older copy, an evicted stream), the events after it may be too, or
come again under new ids (`bus.stream_writer`), so the client gets `resume_expired` and reloads the transcript;
past `PA_DEPENDENCY_RETRY_SECONDS` it gets `resume_expired` with reason `unavailable`. Never a stream that just
stops.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

from ag_ui.core import CustomEvent

from personal_agent.bus import BusEntry, EventBus, entry_ids, get_bus
from personal_agent.bus.base import BusUnavailable
from personal_agent.bus.outage import Outage
from personal_agent.engine.emitter import encode
from personal_agent.errors import DependencyUnavailable, InvalidInput
from personal_agent.events import custom
from personal_agent.settings import get_settings
from personal_agent.stream import fanout


def parse_resume_point(last_event_id: str | None, after: str | None) -> str | None:
    """The entry id to resume after, or None to start from the beginning; malformed ids are refused."""
    value = last_event_id if last_event_id not in (None, "") else after
    if value in (None, ""):
        return None
    assert value is not None
    if value == "0":
        return None
    if not entry_ids.ITEM_ID.match(value):
        raise InvalidInput(
            "Last-Event-ID must be an event id like 1712345678901-0 or 1712345678901-0.3", code="invalid_last_event_id"
        )
    return value


def sse(entry_id: str | None, data: str) -> str:
    head = f"id: {entry_id}\n" if entry_id else ""
    return f"{head}data: {data}\n\n"


def is_terminal(data: str) -> bool:
    """RUN_FINISHED (except an interrupt, after which the run goes on) and RUN_ERROR end a run's stream."""
    if '"RUN_' not in data:
        return False
    event = json.loads(data)
    if event.get("type") == "RUN_ERROR":
        return True
    return event.get("type") == "RUN_FINISHED" and (event.get("outcome") or {}).get("type") != "interrupt"


def resume_expired(after: str | None, reason: Literal["retention", "unavailable"]) -> str:
    """The frame that tells a client to reload the transcript instead (the events it needs are not to be had)."""
    value = {"after": after, "reason": reason}
    custom.check("run", "resume_expired", value)
    return sse(None, encode(CustomEvent(name="resume_expired", value=value)))


@dataclass
class _Position:
    """The id of the last entry sent to the client ("0": none yet)."""

    cursor: str


async def relay(
    stream: str,
    after: str | None,
    *,
    heartbeat: float,
    max_lifetime: float,
    is_gone: Callable[[], Awaitable[bool]],
    stop_on_terminal: bool = True,
    patience_ms: int = 0,
) -> AsyncIterator[str]:
    """Yield SSE frames from `stream` after `after` until a terminal event or `max_lifetime` passes.

    `is_gone` says whether a stream that no longer exists will never be written again (its run ended
    long ago); then, or when `after` is older than what is retained, a CUSTOM `resume_expired` event
    tells the client to reload the transcript from the API. `patience_ms`: how late a new event may be noticed
    on a bus that polls (`EventBus.read`; the feed's announcements can wait, a run's text cannot).
    """
    bus = get_bus()
    outage = Outage("relaying a stream", quiet=True)
    position = _Position(after or "0")
    deadline = time.monotonic() + max_lifetime
    opened = False
    while time.monotonic() < deadline:
        try:
            if not opened:
                if (refusal := await _opening(bus, stream, after, is_gone, stop_on_terminal)) is not None:
                    yield refusal
                    return
                opened = True
                yield ": connected\n\n"
            elif outage.ongoing and await _lost(bus, stream, position.cursor):
                yield resume_expired(position.cursor, "retention")
                return
            outage.over()
            async with _reader(stream, patience_ms) as read:
                async for frames in _frames(read, position, deadline, heartbeat, stop_on_terminal):
                    yield frames
            return
        except BusUnavailable as exc:
            try:
                wait = outage.failed(exc)
            except DependencyUnavailable:
                yield resume_expired(None if position.cursor == "0" else position.cursor, "unavailable")
                return
        yield ": ping\n\n"  # the connection stays open while the bus is waited for
        await asyncio.sleep(min(wait, heartbeat))


async def _opening(
    bus: EventBus, stream: str, after: str | None, is_gone: Callable[[], Awaitable[bool]], stop_on_terminal: bool
) -> str | None:
    """What to answer instead of following the stream: `resume_expired` when the events after `after` are no longer
    kept, an empty stream when the client already has the terminal event; None to follow it."""
    if after is None and not await is_gone():
        return None
    first = await bus.first_id(stream)
    if (first is None and (after is not None or await is_gone())) or (
        first is not None and after is not None and entry_ids.key(after) < entry_ids.key(first)
    ):
        return resume_expired(after, "retention")
    if stop_on_terminal and after is not None and await _ended_at(bus, stream, after):
        return ": connected\n\n"  # the client already has the terminal event: nothing will follow
    return None


async def _lost(bus: EventBus, stream: str, cursor: str) -> bool:
    """After an outage: whether the entry of the event last sent is gone (the bus restarted without its data or from
    an older copy, or dropped the stream), so entries after it may be gone too, or come again under new ids."""
    entry = entry_ids.entry_of(cursor)
    if entry_ids.key(entry)[0] == 0:
        return False  # nothing sent yet ("0", or a client's own "0-0")
    found = await bus.read(stream, entry_ids.before(entry), block_ms=0, count=1)
    return not found or entry_ids.entry_of(found[0].id) != entry


async def _ended_at(bus: EventBus, stream: str, after: str) -> bool:
    """Whether the stream's newest entry is `after` and is a terminal event (a resume from the very end)."""
    last = await bus.last_entry(stream)
    return last is not None and last.id == after and is_terminal(last.data)


@asynccontextmanager
async def _reader(stream: str, patience_ms: int) -> AsyncIterator[Callable[[str, int], Awaitable[list[BusEntry]]]]:
    """`read(after, block_ms)` of `stream`: the process's shared tail of it (`fanout`), or an XREAD of its own."""
    if not get_settings().sse_fanout:
        bus = get_bus()
        yield lambda after, block_ms: bus.read(stream, after, block_ms=block_ms, patience_ms=patience_ms)
        return
    async with fanout.follow(stream, patience_ms) as tail:
        yield lambda after, block_ms: tail.read(after, block_ms=block_ms)


async def _frames(
    read: Callable[[str, int], Awaitable[list[BusEntry]]],
    position: _Position,
    deadline: float,
    heartbeat: float,
    stop_on_terminal: bool,
) -> AsyncIterator[str]:
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        entries = await read(position.cursor, int(min(heartbeat, remaining) * 1000))
        if not entries:
            yield ": ping\n\n"
            continue
        # Everything one read returned goes out as one chunk: one write through the ASGI stack, not one per event.
        frames: list[str] = []
        ended = False
        for entry in entries:
            position.cursor = entry.id
            frames.append(sse(entry.id, entry.data))
            if stop_on_terminal and is_terminal(entry.data):
                ended = True
                break
        yield "".join(frames)
        if ended:
            return
