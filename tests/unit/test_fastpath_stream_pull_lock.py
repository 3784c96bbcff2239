"""`fastpaths.stream_pull_lock`: once the engine is imported, pulling a pydantic-ai stream whose source never waits
takes no event-loop round trip per item (pydantic-ai's own lock took one per pull), and a pull and `aclose()` still
never overlap: closing a stream while a pull waits in its source ends the pull and closes the source cleanly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from pydantic_ai._utils import PeekableAsyncStream

from personal_agent.engine import drive
from personal_agent.fastpaths import stream_pull_lock


async def _numbers(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


async def _loop_turns_while_draining(n: int) -> tuple[list[int], int]:
    """The items of an n-item stream and how many loop iterations ran meanwhile (a callback that counts one per
    iteration and schedules itself again)."""
    loop = asyncio.get_running_loop()
    turns = 0
    stop = False

    def tick() -> None:
        nonlocal turns
        if not stop:
            turns += 1
            loop.call_soon(tick)

    loop.call_soon(tick)
    got = [item async for item in PeekableAsyncStream(_numbers(n))]
    stop = True
    return got, turns


async def test_the_engine_pulls_streams_without_a_loop_turn_per_item() -> None:
    assert drive.request_events  # importing the engine installs it
    assert stream_pull_lock.installed()
    got, ran = await _loop_turns_while_draining(200)
    assert got == list(range(200))
    assert ran <= 1


async def test_pydantic_ai_as_shipped_yields_on_every_pull() -> None:
    """The cost removed: without the engine's lock, every pull lets the loop run other tasks."""
    stream_pull_lock.restore()
    try:
        got, ran = await _loop_turns_while_draining(200)
    finally:
        stream_pull_lock.install()
    assert got == list(range(200))
    assert ran >= 200


async def test_closing_a_stream_while_a_pull_waits_ends_the_pull_and_closes_the_source() -> None:
    entered = asyncio.Event()
    closed = asyncio.Event()

    async def waits_forever() -> AsyncIterator[int]:
        yield 1
        try:
            entered.set()
            await asyncio.Event().wait()
            yield 2
        finally:
            closed.set()

    stream: PeekableAsyncStream[int, AsyncIterator[int]] = PeekableAsyncStream(waits_forever())
    assert await anext(stream) == 1
    pull = asyncio.create_task(anext(stream, None))
    await entered.wait()
    await stream.aclose()  # raised "aclose(): asynchronous generator is already running" without the lock
    assert closed.is_set()
    assert await pull is None
    assert [item async for item in stream] == []
