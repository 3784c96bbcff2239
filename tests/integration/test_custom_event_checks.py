"""The run emitter and the feed announcers check every CUSTOM value against its model before anything reaches the
bus: a drifted value or an unknown name raises where it is emitted and publishes nothing."""

from __future__ import annotations

import uuid

import pytest
from ag_ui.core import CustomEvent
from pydantic import ValidationError

from personal_agent.bus import feed, get_bus
from personal_agent.bus.key_names import feed_stream
from personal_agent.events.custom import UnregisteredEvent
from tests.emitters import scratch_emitter

pytestmark = pytest.mark.usefixtures("stack")


async def test_the_run_emitter_publishes_a_registered_value_and_refuses_the_rest() -> None:
    emitter = scratch_emitter()
    with pytest.raises(UnregisteredEvent):
        await emitter.emit(CustomEvent(name="approval_decided", value={"approval_id": "a1", "decision": "deny"}))
    with pytest.raises(ValidationError):
        await emitter.emit(CustomEvent(name="run_resumed", value={"run_id": "r1", "attempt": "second"}))
    assert await get_bus().read(emitter.stream, "0", block_ms=0, count=10) == []

    await emitter.emit(CustomEvent(name="run_resumed", value={"run_id": "r1", "attempt": 2}))
    entries = await get_bus().read(emitter.stream, "0", block_ms=0, count=10)
    assert len(entries) == 1 and '"run_resumed"' in entries[0].data


async def test_the_feed_announcers_refuse_a_drifted_value() -> None:
    org, user = uuid.uuid4(), uuid.uuid4()
    with pytest.raises(ValidationError):
        await feed.announce(org, user, "output_delivery", {"delivery_id": "d1", "workflow_id": "w1", "status": "ok"})
    with pytest.raises(UnregisteredEvent):
        await feed.announce(org, user, "run_paused", {"run_id": "r1"})
    emitter = scratch_emitter()
    with pytest.raises(ValidationError):  # the run emitter's announcement too (its spec has no user: checked first)
        await emitter.announce("run_started", {"run_id": "r1"})
    assert await get_bus().read(feed_stream(org, user), "0", block_ms=0, count=10) == []

    value = {"delivery_id": "d1", "workflow_id": "w1", "status": "retrying"}
    await feed.announce(org, user, "output_delivery", value)
    entries = await get_bus().read(feed_stream(org, user), "0", block_ms=0, count=10)
    assert len(entries) == 1 and '"output_delivery"' in entries[0].data
