"""Many SSE clients of one stream in one process share one XREAD (`stream.fanout`), and each still gets exactly
the entries after its own resume point: from the start, from the middle, from the newest entry, from an entry
older than what the shared tail holds, while the stream is being written."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest

from personal_agent.bus import get_bus, local_writes
from personal_agent.bus.stream_writer import StreamWriter
from personal_agent.stream import fanout
from personal_agent.stream.relay import relay

EVENT = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}


async def _never_gone() -> bool:
    return False


async def _ids(stream: str, after: str | None, following: Following | None = None) -> list[str]:
    ids: list[str] = []
    me = following.join(after) if following else 0
    async for chunk in relay(stream, after, heartbeat=1.0, max_lifetime=30.0, is_gone=_never_gone):
        ids.extend(line[4:] for line in chunk.splitlines() if line.startswith("id: "))
        if following and ids:
            await following.saw(me, ids[-1])
    return ids


class Following:
    """The newest entry each client has had, so the writer writes its next batch once every client has the last
    one: the stream is written over time, as a run writes it, without waiting on the clock."""

    def __init__(self) -> None:
        self.newest: list[str | None] = []
        self.changed = asyncio.Condition()

    def join(self, after: str | None) -> int:
        self.newest.append(after)
        return len(self.newest) - 1

    async def saw(self, client: int, entry_id: str) -> None:
        async with self.changed:
            self.newest[client] = entry_id
            self.changed.notify_all()

    async def caught_up(self, last: str) -> None:
        async with asyncio.timeout(30), self.changed:
            await self.changed.wait_for(lambda: all(newest == last for newest in self.newest))

    def client(self, stream: str, after: str | None) -> asyncio.Task[list[str]]:
        """A client of `stream` from `after`, counted before it runs."""
        return asyncio.create_task(_ids(stream, after, self))


async def _xreads() -> int:
    import redis.asyncio as aioredis

    from personal_agent.settings import get_settings

    client: Any = aioredis.from_url(get_settings().redis_url, decode_responses=True)
    try:
        return int((await client.info("commandstats")).get("cmdstat_xread", {}).get("calls", 0))
    finally:
        await client.aclose()


async def _publish(stream: str, items: list[dict[str, Any]]) -> list[str]:
    data = [json.dumps(item) for item in items]
    return await get_bus().publish_batch(stream, data, retention_seconds=600, maxlen=10_000)


async def test_clients_of_one_stream_share_its_reads_and_each_gets_exactly_its_rest(
    stack: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fanout, "KEEP", 40)  # so the tail drops entries a slow or old resume point still needs
    stream = f"test:fanout:{uuid.uuid4().hex}"
    early = await _publish(stream, [EVENT] * 30)
    points: list[str | None] = [None, early[0], early[14], early[29]]
    following = Following()
    clients = [following.client(stream, after) for after in points for _ in range(3)]
    await following.caught_up(early[-1])  # the clients connected (their tail starts at early[-1])
    late: list[str] = []
    for _ in range(20):
        late += await _publish(stream, [EVENT] * 5)
        await following.caught_up(late[-1])
    late += await _publish(stream, [{"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}])
    every = early + late
    old = early[2]  # a resume point the tail no longer holds (it keeps 40): this client catches up on its own
    clients.append(asyncio.create_task(_ids(stream, old)))
    points.append(old)
    got = await asyncio.wait_for(asyncio.gather(*clients), 30)
    for after, ids in zip([p for p in points[:-1] for _ in range(3)] + [old], got, strict=True):
        start = 0 if after is None else every.index(after) + 1
        assert ids == every[start:], after
    assert stream not in fanout._TAILS or fanout._TAILS[stream].clients == 0


async def _xreads_of_twelve_clients() -> int:
    """XREADs while 12 clients follow one stream written in 11 batches, every client getting all 32 entries."""
    stream = f"test:fanout:{uuid.uuid4().hex}"
    await _publish(stream, [EVENT])
    before = await _xreads()
    following = Following()
    clients = [following.client(stream, None) for _ in range(12)]
    for _ in range(10):
        written = await _publish(stream, [EVENT] * 3)
        await following.caught_up(written[-1])  # every client has this batch before the next is written
    await _publish(stream, [{"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}])
    got = await asyncio.wait_for(asyncio.gather(*clients), 30)
    assert all(len(ids) == 32 for ids in got)
    return await _xreads() - before


async def test_twelve_clients_of_one_stream_share_its_xreads(stack: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from personal_agent.settings import get_settings

    shared = await _xreads_of_twelve_clients()
    monkeypatch.setattr(get_settings(), "sse_fanout", False)
    own = await _xreads_of_twelve_clients()
    assert shared * 3 <= own, (shared, own)


async def test_a_stream_written_here_reaches_its_clients_without_reading_it_back(stack: object) -> None:
    """One Lambda per streamed turn: the process that writes a run's stream also relays it. Its batches go to its
    clients as they land (`bus.local_writes`), not by an XREAD each; a batch written by someone else between two
    of them (a writer in another process) is still read, in order, once the next local batch shows the gap; and once
    the local writer is gone the clients read the bus again. Every client gets every entry once, in order."""
    stream = f"test:fanout:{uuid.uuid4().hex}"
    writer = StreamWriter(get_bus(), stream, retention_seconds=600, maxlen=10_000, what="test")
    every = await writer.send([json.dumps(EVENT)])
    following = Following()
    with local_writes.writing(stream):
        clients = [following.client(stream, every[0]) for _ in range(3)]
        before = await _xreads()
        for _ in range(20):
            every += await writer.send([json.dumps(EVENT)] * 4)
            await following.caught_up(every[-1])
        local_only = await _xreads() - before
        every += await _publish(stream, [EVENT] * 2)  # another process's batch: this one hears nothing of it
        every += await writer.send([json.dumps(EVENT)] * 3)  # follows a batch the tail missed: read from the bus
        await following.caught_up(every[-1])
    every += await _publish(stream, [{"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}])
    got = await asyncio.wait_for(asyncio.gather(*clients), 30)
    assert all(ids == every[1:] for ids in got), got
    # Read back, it would be one XREAD a batch (20). The count is the server's, so a stray read of another test's
    # leftover tail may land in it: a few are allowed, not one a batch.
    assert local_only <= 3, local_only


async def test_a_batch_written_here_before_the_tail_listened_is_read_at_once(stack: object) -> None:
    """The race of a streamed turn's first event: the tail read the stream's newest id, then the drive wrote its
    first batch before the tail listened. The tail does not wait for the writer's next batch (which may be the
    model's first token, seconds away): it reads the bus."""
    stream = f"test:fanout:{uuid.uuid4().hex}"
    writer = StreamWriter(get_bus(), stream, retention_seconds=600, maxlen=10_000, what="test")
    with local_writes.writing(stream):
        tail = fanout.Tail(get_bus(), stream, "0-0")  # its base, read before the batch landed
        written = await writer.send([json.dumps(EVENT)] * 2)  # nobody listens yet
        tail.clients = 1
        tail.task = asyncio.create_task(tail._follow())
        got = await tail.read("0-0", block_ms=int(fanout.LOCAL_WAIT_SECONDS * 1000 / 2))
        tail.clients = 0
        tail.wanted.set()
        tail.local.set()
        await asyncio.wait_for(tail.task, 30)
    assert [entry.id for entry in got] == written
