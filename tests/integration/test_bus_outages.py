"""Publishing a run's events rides out a bus that blinks (issue 41): the real Valkey killed and started again, an
answer lost after the script ran, an Upstash 5xx burst. Every event arrives once, in order; past
`PA_DEPENDENCY_RETRY_SECONDS` the publisher raises `DependencyUnavailable` at once, keeping what it holds."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from ag_ui.core import (
    BaseEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from redis.asyncio import Redis

from personal_agent.bus import EventBus
from personal_agent.bus.base import BusUnavailable
from personal_agent.bus.redis_streams import RedisStreamsBus
from personal_agent.bus.upstash import UpstashBus
from personal_agent.engine.emitter import RunEmitter
from personal_agent.errors import DependencyUnavailable
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec
from tests.integration.valkey_restart import restartable_valkey
from tests.upstash_bridge import running_bridge

pytestmark = pytest.mark.timeout(90)
TOKEN = f"test-upstash-token-{uuid.uuid4().hex}"
OUTAGE_SEEN = "the bus did not answer"


def _spec() -> RunSpec:
    return RunSpec(
        run_id=uuid.uuid4(),
        org_id=uuid.uuid4(),
        user_id=None,
        chat_id=uuid.uuid4(),
        model="m",
        instructions="",
        mode="inline",
    )


def _turn(spec: RunSpec, deltas: int) -> tuple[list[BaseEvent], list[BaseEvent]]:
    """A run's events, split where the test cuts the bus: what goes before, and what is emitted during the cut."""
    thread, run = str(spec.chat_id), str(spec.run_id)
    before: list[BaseEvent] = [
        RunStartedEvent(thread_id=thread, run_id=run),
        TextMessageStartEvent(message_id="m1", role="assistant"),
    ]
    during: list[BaseEvent] = [TextMessageContentEvent(message_id="m1", delta=f"d{i} ") for i in range(deltas)]
    during += [TextMessageEndEvent(message_id="m1"), RunFinishedEvent(thread_id=thread, run_id=run)]
    return before, during


def _described(events: list[BaseEvent]) -> list[tuple[str, str | None]]:
    return [(e.type.value, getattr(e, "delta", None)) for e in events]


async def _stored(stream: str) -> list[tuple[str, str | None]]:
    raw = Redis.from_url(os.environ["REDIS_URL"], decode_responses=True)
    try:
        entries = await raw.xrange(stream)
    finally:
        await raw.aclose()
    data = [json.loads(item) for _id, fields in entries for item in fields["d"].split("\n")]  # a batch per entry
    return [(d["type"], d.get("delta")) for d in data]


async def _until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def _emit_each(emitter: RunEmitter, events: list[BaseEvent]) -> None:
    for event in events:
        await emitter.emit(event)


class Notes(logging.Handler):
    """What the bus logs, as it logs it (the package logger does not propagate to pytest's capture)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    @property
    def text(self) -> str:
        return "\n".join(self.messages)


@pytest.fixture
def outage_logs() -> Iterator[Notes]:
    notes, logger = Notes(), logging.getLogger("personal_agent.bus")
    logger.addHandler(notes)
    try:
        yield notes
    finally:
        logger.removeHandler(notes)


@pytest.fixture
async def tcp_bus(stack: object) -> AsyncIterator[EventBus]:
    bus = RedisStreamsBus(os.environ["REDIS_URL"])
    try:
        yield bus
    finally:
        await bus.close()


async def test_events_emitted_while_valkey_is_down_arrive_in_order_exactly_once(
    stack: object, tcp_bus: EventBus, outage_logs: Notes
) -> None:
    emitter = RunEmitter(_spec(), bus=tcp_bus)
    before, during = _turn(emitter.spec, deltas=40)
    with restartable_valkey(stack) as valkey:
        await _emit_each(emitter, before)
        valkey.kill()
        emitting = asyncio.create_task(_emit_each(emitter, during))
        await _until(lambda: OUTAGE_SEEN in outage_logs.text)  # the emitter met the outage and waits it out
        assert not emitting.done()
        valkey.start()
        await asyncio.wait_for(emitting, timeout=30)
    assert await _stored(emitter.stream) == _described(before + during)
    raw = Redis.from_url(os.environ["REDIS_URL"], decode_responses=True)
    try:
        assert emitter.last_id == (await raw.xrevrange(emitter.stream, count=1))[0][0]
    finally:
        await raw.aclose()


async def test_events_a_valkey_back_from_an_older_copy_lost_are_published_again_once(
    stack: object, tcp_bus: EventBus, tmp_path: Path
) -> None:
    emitter = RunEmitter(_spec(), bus=tcp_bus)
    before, during = _turn(emitter.spec, deltas=10)
    lost, rest = during[:5], during[5:]
    with restartable_valkey(stack) as valkey:
        await _emit_each(emitter, before)
        valkey.stop()
        older = valkey.copy(tmp_path)  # a replica that has `before` and no more
        valkey.start()
        await emitter.emit(*lost)
        await emitter.flush()
        valkey.kill()
        valkey.start(data_from=older)  # the failover: acknowledged events are gone
        assert await _stored(emitter.stream) == _described(before)
        await _emit_each(emitter, rest)
    assert await _stored(emitter.stream) == _described(before + lost + rest)


class ReplyDropper:
    """A loopback TCP proxy to Valkey that, once armed, lets the next EVALSHA through and cuts the connection
    instead of returning its answer: the script ran, and the client cannot tell."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.armed = False
        self.dropped = 0
        self.port = 0

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target)
        cut = asyncio.Event()

        async def upstream() -> None:
            while data := await client_r.read(65536):
                if self.armed and b"EVALSHA" in data:
                    self.armed = False
                    cut.set()
                server_w.write(data)
                await server_w.drain()

        async def downstream() -> None:
            while data := await server_r.read(65536):
                if cut.is_set():  # the script's answer: it ran; the client never hears so
                    self.dropped += 1
                    break
                client_w.write(data)
                await client_w.drain()

        done, pending = await asyncio.wait(
            {asyncio.create_task(upstream()), asyncio.create_task(downstream())}, return_when=asyncio.FIRST_COMPLETED
        )
        for task in pending:
            task.cancel()
        client_w.transport.abort()
        server_w.transport.abort()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ReplyDropper]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            server.close()


class Freezer:
    """A loopback TCP proxy to Valkey that can freeze: connections stay open and nothing gets through either way
    until it thaws (a server behind an address that stopped answering, as in a failover), then what waited flows."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.port = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await source.read(65536):
                await self.flowing.wait()
                sink.write(data)
                await sink.drain()
        sink.close()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target)
        for pump in (self._pump(client_r, server_w), self._pump(server_r, client_w)):
            task = asyncio.create_task(pump)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Freezer]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            self.flowing.set()
            server.close()
            for task in list(self._tasks):
                task.cancel()


async def test_a_server_that_stops_answering_costs_the_bound_not_a_hang(
    stack: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "dependency_retry_seconds", 1.0)
    valkey_port = urlparse(os.environ["REDIS_URL"]).port
    assert valkey_port is not None
    async with Freezer(valkey_port).running() as proxy:
        bus = RedisStreamsBus(f"redis://127.0.0.1:{proxy.port}/0", command_timeout_s=1.0)
        try:
            emitter = RunEmitter(_spec(), bus=bus)
            before, during = _turn(emitter.spec, deltas=5)
            await _emit_each(emitter, before)
            proxy.flowing.clear()
            with pytest.raises(DependencyUnavailable):  # a command timeout or two past the bound, never a hang
                await asyncio.wait_for(emitter.emit(*during), timeout=10)
            with pytest.raises(BusUnavailable):  # a blocking read: one command timeout past its block
                await asyncio.wait_for(bus.read(emitter.stream, "0", block_ms=200, count=1), timeout=5)
            proxy.flowing.set()  # the attempts that timed out reach the server now, and find their batch written
            await emitter.flush()
        finally:
            await bus.close()
    assert await _stored(emitter.stream) == _described(before + during)


async def test_a_batch_whose_answer_was_lost_is_not_written_twice(stack: object) -> None:
    valkey_port = urlparse(os.environ["REDIS_URL"]).port
    assert valkey_port is not None
    async with ReplyDropper(valkey_port).running() as proxy:
        bus = RedisStreamsBus(f"redis://127.0.0.1:{proxy.port}/0")
        try:
            emitter = RunEmitter(_spec(), bus=bus)
            before, during = _turn(emitter.spec, deltas=20)
            await _emit_each(emitter, before)  # the script is loaded; nothing is cut yet
            proxy.armed = True
            await emitter.emit(*during)  # one batch: it lands, its answer is lost, it is sent again
        finally:
            await bus.close()
    assert proxy.dropped == 1
    assert await _stored(emitter.stream) == _described(before + during)


@pytest.fixture(params=["redis", "upstash"])
async def either_bus(request: pytest.FixtureRequest, stack: object) -> AsyncIterator[EventBus]:
    if request.param == "redis":
        bus: EventBus = RedisStreamsBus(os.environ["REDIS_URL"])
        try:
            yield bus
        finally:
            await bus.close()
        return
    with running_bridge(os.environ["REDIS_URL"], TOKEN) as url:
        bus = UpstashBus(url, TOKEN)
        try:
            yield bus
        finally:
            await bus.close()


async def test_publishing_a_writers_batch_again_appends_only_what_had_not_landed(either_bus: EventBus) -> None:
    stream, keep = f"pa:test:{uuid.uuid4()}", {"retention_seconds": 60, "maxlen": 100}
    first = await either_bus.publish_batch(stream, ["a", "b", "c"], **keep, writer="w1", seq=0)
    assert await either_bus.publish_batch(stream, ["a", "b", "c"], **keep, writer="w1", seq=0) == first
    assert await either_bus.publish(stream, "c", **keep, writer="w1", seq=2) == first[2]
    overlap = await either_bus.publish_batch(stream, ["c", "d"], **keep, writer="w1", seq=2)
    assert overlap[0] == first[2] and overlap[1] not in first
    other = await either_bus.publish_batch(stream, ["a"], **keep, writer="w2", seq=0)
    assert other[0] not in first + overlap  # another writer's item 0 is its own
    plain = await either_bus.publish(stream, "a", **keep)  # no writer: appended every time (the feed)
    assert plain != other[0]
    entries = await either_bus.read(stream, "0", block_ms=0, count=100)
    assert [e.data for e in entries] == ["a", "b", "c", "d", "a", "a"]


async def test_upstash_publishing_rides_out_a_burst_of_5xx(stack: object, outage_logs: Notes) -> None:
    with running_bridge(os.environ["REDIS_URL"], TOKEN) as url:
        bus = UpstashBus(url, TOKEN, request_timeout_s=3.0)
        try:
            emitter = RunEmitter(_spec(), bus=bus)
            before, during = _turn(emitter.spec, deltas=10)
            with restartable_valkey(stack) as valkey:
                await _emit_each(emitter, before)
                valkey.kill()  # the bridge answers 500 (its Redis is gone), as Upstash does in a bad minute
                emitting = asyncio.create_task(_emit_each(emitter, during))
                await _until(lambda: OUTAGE_SEEN in outage_logs.text)
                assert not emitting.done()
                valkey.start()
                await asyncio.wait_for(emitting, timeout=40)
        finally:
            await bus.close()
    assert await _stored(emitter.stream) == _described(before + during)


async def test_an_outage_past_the_bound_raises_dependency_unavailable_and_keeps_the_events(
    stack: object, tcp_bus: EventBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "dependency_retry_seconds", 1.0)
    emitter = RunEmitter(_spec(), bus=tcp_bus)
    before, during = _turn(emitter.spec, deltas=5)
    with restartable_valkey(stack) as valkey:
        await _emit_each(emitter, before)
        valkey.kill()
        with pytest.raises(DependencyUnavailable) as gave_up:
            await asyncio.wait_for(emitter.emit(*during), timeout=15)  # no hang: the bound, then an answer
        assert gave_up.value.dependency == "bus"
        valkey.start()
    await emitter.flush()  # what it held goes out, once, in order, when the bus is back
    assert await _stored(emitter.stream) == _described(before + during)
