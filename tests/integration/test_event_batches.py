"""Coalesced events on the real bus: text deltas are held for at most `event_batch_ms` and then appended in one
round trip, in order, one entry id each; any other event takes what is held along with it, so nothing is held
back when a message, a step or a run ends."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ag_ui.core import TextMessageContentEvent, TextMessageEndEvent

from personal_agent.bus import get_bus
from personal_agent.engine.emitter import RunEmitter
from personal_agent.settings import get_settings
from tests.emitters import scratch_emitter


@pytest.fixture
def batch_ms(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, stack: object) -> Iterator[None]:
    monkeypatch.setenv("PA_EVENT_BATCH_MS", str(request.param))
    get_settings.cache_clear()
    yield
    monkeypatch.delenv("PA_EVENT_BATCH_MS")
    get_settings.cache_clear()


def _delta(i: int) -> TextMessageContentEvent:
    return TextMessageContentEvent(message_id="m1", delta=f"d{i} ")


async def _stream(emitter: RunEmitter, block_ms: int = 0) -> list[dict[str, Any]]:
    import json

    entries = await get_bus().read(emitter.stream, "0", block_ms=block_ms, count=1000)
    return [{"id": e.id, **json.loads(e.data)} for e in entries]


@pytest.mark.parametrize("batch_ms", [100], indirect=True)
async def test_deltas_wait_and_go_out_with_the_next_other_event_in_order(batch_ms: None) -> None:
    emitter = scratch_emitter()
    for i in range(10):
        await emitter.emit(_delta(i))
    assert await _stream(emitter) == []  # held: no round trip per delta

    await emitter.emit(TextMessageEndEvent(message_id="m1"))

    events = await _stream(emitter)
    assert [e.get("delta") for e in events] == [f"d{i} " for i in range(10)] + [None]
    assert events[-1]["type"] == "TEXT_MESSAGE_END"
    assert len({e["id"] for e in events}) == 11
    assert emitter.last_id == events[-1]["id"]  # what a checkpoint stores as the stream position


@pytest.mark.parametrize("batch_ms", [20], indirect=True)
async def test_held_deltas_are_sent_within_the_window_with_no_further_event(batch_ms: None) -> None:
    emitter = scratch_emitter()
    for i in range(5):
        await emitter.emit(_delta(i))
    events: list[dict[str, Any]] = []
    while len(events) < 5:  # XREAD BLOCK: returns as soon as the timer's flush lands
        events = await _stream(emitter, block_ms=5000)
        assert events, "the held deltas never reached the stream"
    assert [e["delta"] for e in events] == [f"d{i} " for i in range(5)]
    await emitter.flush()  # waits for the background flush to take its reply (nothing is left to send)
    assert emitter.last_id == events[-1]["id"]
    assert len(await _stream(emitter)) == 5


@pytest.mark.parametrize("batch_ms", [0], indirect=True)
async def test_with_batching_off_every_event_is_on_the_stream_when_emit_returns(batch_ms: None) -> None:
    emitter = scratch_emitter()
    for i in range(3):
        await emitter.emit(_delta(i))
        assert [e["delta"] for e in await _stream(emitter)] == [f"d{j} " for j in range(i + 1)]


@pytest.mark.parametrize("batch_ms", [100], indirect=True)
async def test_the_first_delta_of_a_message_goes_at_once_and_the_rest_wait_the_window(batch_ms: None) -> None:
    """However wide the window, a reader's first token is not held by it (issue 35): only the deltas after it are."""
    from ag_ui.core import TextMessageStartEvent, ToolCallArgsEvent, ToolCallStartEvent

    emitter = scratch_emitter()
    await emitter.emit(TextMessageStartEvent(message_id="m1", role="assistant"))
    await emitter.emit(_delta(0))
    assert [e.get("delta") for e in await _stream(emitter)] == [None, "d0 "]  # on the stream when emit returns
    for i in range(1, 4):
        await emitter.emit(_delta(i))
    assert len(await _stream(emitter)) == 2  # held for the window
    await emitter.emit(TextMessageEndEvent(message_id="m1"))
    assert [e.get("delta") for e in await _stream(emitter)] == [None, "d0 ", "d1 ", "d2 ", "d3 ", None]
    await emitter.emit(ToolCallStartEvent(tool_call_id="t1", tool_call_name="f"))
    await emitter.emit(ToolCallArgsEvent(tool_call_id="t1", delta="{"))
    await emitter.emit(ToolCallArgsEvent(tool_call_id="t1", delta="}"))
    assert [e.get("delta") for e in await _stream(emitter)][-2:] == [None, "{"]  # the first args at once, not "}"
    await emitter.flush()
    assert [e.get("delta") for e in await _stream(emitter)][-1] == "}"
