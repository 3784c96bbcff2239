"""Batches this process just wrote to a stream, handed to this process's readers of it without reading them back.

One Lambda per streamed turn (`lifecycle.drivers.streamed_here`) both drives a run and relays its events to the
client that started it. Reading its own writes back cost one XREAD per batch (on Upstash's REST path, a poll or
more per batch): about as many commands as the writes. Here a writer tells the readers of its event loop what it
published (`wrote`): the ids the bus gave the items and the stream's newest entry before them, as the publish script
answered it atomically, so a reader that holds exactly up to that entry knows nothing came between and takes the
batch as it is (`stream.fanout`). Anything else (a reader behind, a batch sent again, a writer elsewhere) is read
from the bus as before. Readers wait for local batches only while a local writer of that stream is `active`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from personal_agent.bus.base import BusEntry

Listener = Callable[[str | None, list[BusEntry]], None]
"""Called with (the stream's newest entry before the batch, or None when not known; the batch's items)."""

_WRITERS: dict[tuple[int, str], int] = {}
_LISTENERS: dict[tuple[int, str], list[Listener]] = {}
_NEWEST: dict[tuple[int, str], str] = {}  # the id of the last item a writer here wrote to the stream


def _key(stream: str) -> tuple[int, str]:
    return id(asyncio.get_running_loop()), stream


@contextmanager
def writing(stream: str) -> Iterator[None]:
    """This task writes `stream` until the block ends (a drive of its run here); its readers here wait for it."""
    key = _key(stream)
    _WRITERS[key] = _WRITERS.get(key, 0) + 1
    try:
        yield
    finally:
        _WRITERS[key] -= 1
        if _WRITERS[key] <= 0:
            del _WRITERS[key]
            _NEWEST.pop(key, None)
            for listener in list(_LISTENERS.get(key, ())):
                listener(None, [])  # the writer is gone: readers go back to reading the bus


def active(stream: str) -> bool:
    """Whether a writer of this event loop is writing `stream` now."""
    return _key(stream) in _WRITERS


def newest(stream: str) -> str | None:
    """The id of the last item a writer of this event loop wrote to `stream` while it is `active`: a reader that
    holds less missed a batch (one written before it listened) and reads the bus."""
    return _NEWEST.get(_key(stream))


def wrote(stream: str, previous: str | None, items: list[BusEntry]) -> None:
    """A batch landed on `stream` (after `previous`): tell this event loop's readers of it."""
    try:
        key = _key(stream)
    except RuntimeError:  # no running loop: nobody here to tell
        return
    if key in _WRITERS and items:
        _NEWEST[key] = items[-1].id
    for listener in list(_LISTENERS.get(key, ())):
        listener(previous, items)


@contextmanager
def listening(stream: str, listener: Listener) -> Iterator[None]:
    """Call `listener` for every batch this event loop writes to `stream` (and once when its writer ends)."""
    key = _key(stream)
    _LISTENERS.setdefault(key, []).append(listener)
    try:
        yield
    finally:
        _LISTENERS[key].remove(listener)
        if not _LISTENERS[key]:
            del _LISTENERS[key]
