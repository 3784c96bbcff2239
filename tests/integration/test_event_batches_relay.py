"""What a batch of events costs the relay, on the real Valkey: a relay blocked in XREAD wakes once for a whole
batch (not for its first entry and again for the rest), and while many runs of one process stream at once their
batches gather over a wider window (one run alone keeps `event_batch_ms`)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator

import pytest
from ag_ui.core import TextMessageContentEvent
from redis.asyncio import Redis

from personal_agent.bus.key_names import run_stream
from personal_agent.bus.redis_streams import RedisStreamsBus
from personal_agent.engine import batch_window
from tests.emitters import scratch_emitter

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def bus(stack: object) -> AsyncIterator[RedisStreamsBus]:
    backend = RedisStreamsBus(os.environ["REDIS_URL"])
    try:
        yield backend
    finally:
        await backend.close()


async def test_a_relay_blocked_in_xread_wakes_once_for_a_whole_batch(bus: RedisStreamsBus) -> None:
    stream = run_stream(uuid.uuid4(), uuid.uuid4())
    start = await bus.publish(stream, "start", retention_seconds=600, maxlen=1000)
    raw = Redis.from_url(os.environ["REDIS_URL"])
    try:
        async with raw.monitor() as monitor:
            reader = asyncio.create_task(bus.read(stream, start, block_ms=20_000))
            # Valkey feeds MONITOR as it runs a command: once the XREAD shows, it is blocked waiting in Valkey, and
            # the batch sent after it can only wake it.
            while (
                not (command := (await monitor.next_command())["command"]).startswith("XREAD") or stream not in command
            ):
                pass
        ids = await bus.publish_batch(stream, [f"e{i}" for i in range(10)], retention_seconds=600, maxlen=1000)
        woke_with = await reader
    finally:
        await raw.aclose()
    assert [e.data for e in woke_with] == [f"e{i}" for i in range(10)]
    assert [e.id for e in woke_with] == ids


async def test_the_batch_window_widens_while_many_runs_stream_and_narrows_after(stack: object) -> None:
    base = 0.005
    alone = batch_window.window(base)
    runs = [scratch_emitter() for _ in range(20)]
    for emitter in runs:
        await emitter.emit(TextMessageContentEvent(message_id="m1", delta="hi "))
    assert batch_window.window(base) >= alone + 15 * base / batch_window.SHARE  # 20 more runs gathering
    assert batch_window.window(base) <= max(base, batch_window.MAX_WINDOW_SECONDS)

    for emitter in runs:
        await emitter.flush()
    assert batch_window.window(base) == alone
    assert all(emitter.last_id for emitter in runs)  # every held delta reached the bus
