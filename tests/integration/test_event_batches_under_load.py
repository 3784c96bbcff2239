"""Batches of text deltas grow when the event loop is busy instead of shrinking to a round trip per delta: a
delta that arrives after the batch window has passed (the loop was busy elsewhere, so the timer is late) waits
for the timer with the others; only a producer that has piled up a full inline batch without letting the timer
run sends at once. Order and one entry id per event stay as they were (the real bus)."""

from __future__ import annotations

import json
import time
import types
from collections.abc import Iterator
from typing import Any

import pytest
from ag_ui.core import TextMessageContentEvent, TextMessageEndEvent

from personal_agent.bus import get_bus
from personal_agent.engine import emitter as emitter_module
from personal_agent.engine.emitter import INLINE_BATCH, RunEmitter
from personal_agent.settings import get_settings
from tests.emitters import scratch_emitter


class Clock:
    """The emitter's monotonic clock, moved by hand (the loop's timers keep real time)."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch, stack: object) -> Iterator[Clock]:
    monkeypatch.setenv("PA_EVENT_BATCH_MS", "100")
    get_settings.cache_clear()
    fake = Clock()
    monkeypatch.setattr(emitter_module, "time", types.SimpleNamespace(monotonic=fake.monotonic, time=time.time))
    yield fake
    monkeypatch.delenv("PA_EVENT_BATCH_MS")
    get_settings.cache_clear()


async def _stream(emitter: RunEmitter) -> list[dict[str, Any]]:
    entries = await get_bus().read(emitter.stream, "0", block_ms=0, count=1000)
    return [{"id": e.id, **json.loads(e.data)} for e in entries]


def _delta(i: int) -> TextMessageContentEvent:
    return TextMessageContentEvent(message_id="m1", delta=f"d{i} ")


async def test_deltas_after_a_late_window_wait_for_the_timer_together(clock: Clock) -> None:
    emitter = scratch_emitter()
    await emitter.emit(_delta(0))
    clock.now += 1.0  # the window passed while the loop was busy with other runs
    for i in range(1, 10):
        await emitter.emit(_delta(i))
    assert await _stream(emitter) == []  # not one round trip per late delta

    await emitter.emit(TextMessageEndEvent(message_id="m1"))

    events = await _stream(emitter)
    assert [e.get("delta") for e in events] == [f"d{i} " for i in range(10)] + [None]
    assert len({e["id"] for e in events}) == 11
    assert emitter.last_id == events[-1]["id"]


async def test_a_producer_that_never_lets_the_timer_run_still_sends_a_full_batch(clock: Clock) -> None:
    emitter = scratch_emitter()
    for i in range(INLINE_BATCH - 1):
        await emitter.emit(_delta(i))
    clock.now += 1.0
    await emitter.emit(_delta(INLINE_BATCH - 1))

    events = await _stream(emitter)  # on the stream when emit returned, no timer needed
    assert [e["delta"] for e in events] == [f"d{i} " for i in range(INLINE_BATCH)]
    assert emitter.last_id == events[-1]["id"]
