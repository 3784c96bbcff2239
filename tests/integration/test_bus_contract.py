"""One contract for every event-bus backend: Redis/Valkey over TCP, and Upstash REST via the test bridge.

Both run against the same embedded Valkey (the `stack` fixture); the Upstash backend goes through
`tests/upstash_bridge.py`, an Upstash-REST-compatible HTTP server. Every test uses its own stream.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from redis.asyncio import Redis

from personal_agent.bus import BusEntry, EventBus, entry_ids, get_bus, reset_bus
from personal_agent.bus.key_names import run_stream
from personal_agent.bus.redis_streams import RedisStreamsBus
from personal_agent.bus.stream_writer import StreamWriter
from personal_agent.bus.upstash import UpstashBus, UpstashBusError
from personal_agent.settings import get_settings
from tests.upstash_bridge import running_bridge

pytestmark = pytest.mark.timeout(60)

TOKEN = f"test-upstash-token-{uuid.uuid4().hex}"
RETENTION = 600
MAXLEN = 10_000


def _key(item_id: str) -> tuple[int, int, int]:
    return entry_ids.key(item_id)


@pytest.fixture(scope="module")
def redis_url(stack: object) -> str:
    return os.environ["REDIS_URL"]


@pytest.fixture(scope="module")
def bridge_url(redis_url: str) -> Iterator[str]:
    with running_bridge(redis_url, TOKEN) as url:
        yield url


@pytest.fixture(params=["redis", "upstash"])
async def bus(request: pytest.FixtureRequest, redis_url: str, bridge_url: str) -> AsyncIterator[EventBus]:
    backend: EventBus = RedisStreamsBus(redis_url) if request.param == "redis" else UpstashBus(bridge_url, TOKEN)
    try:
        yield backend
    finally:
        await backend.close()


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[Redis]:
    """A plain Redis client on the same server, to look behind the bus (TTL, XLEN, expiry)."""
    client = Redis.from_url(redis_url, decode_responses=True)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def stream() -> str:
    return run_stream(uuid.uuid4(), uuid.uuid4())


def _payload(i: int) -> str:
    return json.dumps({"type": "TEXT_MESSAGE_CONTENT", "delta": f"chunk {i} – ünïcødé ✓", "i": i})


async def _publish_many(bus: EventBus, stream: str, n: int, *, maxlen: int = MAXLEN) -> list[BusEntry]:
    published = []
    for i in range(n):
        data = _payload(i)
        published.append(BusEntry(await bus.publish(stream, data, retention_seconds=RETENTION, maxlen=maxlen), data))
    return published


async def test_publish_returns_increasing_ids_and_read_from_zero_returns_all(bus: EventBus, stream: str) -> None:
    published = await _publish_many(bus, stream, 30)
    keys = [_key(e.id) for e in published]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert await bus.read(stream, "0", block_ms=0, count=1000) == published
    assert await bus.first_id(stream) == published[0].id
    assert await bus.last_id(stream) == published[-1].id
    assert await bus.last_entry(stream) == published[-1]


async def test_read_after_every_id_returns_exactly_the_rest(bus: EventBus, stream: str) -> None:
    published = await _publish_many(bus, stream, 40)
    for k, entry in enumerate(published):
        assert await bus.read(stream, entry.id, block_ms=0, count=1000) == published[k + 1 :], f"after #{k}"


async def test_read_pages_with_count_without_loss_or_duplicates(bus: EventBus, stream: str) -> None:
    published = await _publish_many(bus, stream, 23)
    received: list[BusEntry] = []
    cursor = "0"
    while page := await bus.read(stream, cursor, block_ms=0, count=7):
        assert len(page) <= 7
        received.extend(page)
        cursor = page[-1].id
    assert received == published


async def test_read_blocks_until_a_concurrent_publish_arrives(bus: EventBus, stream: str) -> None:
    (last,) = await _publish_many(bus, stream, 1)
    loop = asyncio.get_running_loop()
    reader = asyncio.create_task(bus.read(stream, last.id, block_ms=10_000))
    done, _ = await asyncio.wait({reader}, timeout=0.1)
    assert not done, "read returned before anything was published"
    published_at = loop.time()
    new_id = await bus.publish(stream, "next", retention_seconds=RETENTION, maxlen=MAXLEN)
    assert await asyncio.wait_for(reader, timeout=5) == [BusEntry(new_id, "next")]
    assert loop.time() - published_at < 2, "the blocked read did not wake up on the publish"


async def test_tailing_readers_get_every_concurrent_publish_exactly_once(bus: EventBus, stream: str) -> None:
    total = 40
    readers_started = [asyncio.Event() for _ in range(2)]

    async def tail(started: asyncio.Event) -> list[BusEntry]:
        received: list[BusEntry] = []
        cursor = "0"
        started.set()
        while len(received) < total:
            batch = await bus.read(stream, cursor, block_ms=2_000, count=5)
            received.extend(batch)
            if batch:
                cursor = batch[-1].id
        return received

    async def publish() -> list[BusEntry]:
        for event in readers_started:
            await event.wait()
        published = []
        for i in range(total):
            data = _payload(i)
            published.append(
                BusEntry(await bus.publish(stream, data, retention_seconds=RETENTION, maxlen=MAXLEN), data)
            )
            if i % 4 == 0:
                await asyncio.sleep(0)  # let the readers interleave with the writer
        return published

    async with asyncio.timeout(15):
        first, second, published = await asyncio.gather(tail(readers_started[0]), tail(readers_started[1]), publish())
    assert first == published
    assert second == published


async def test_read_dollar_returns_only_what_is_published_next(bus: EventBus, stream: str) -> None:
    old = await _publish_many(bus, stream, 3)
    reader = asyncio.create_task(bus.read(stream, "$", block_ms=10_000))
    published: list[BusEntry] = []
    async with asyncio.timeout(10):
        while not reader.done():  # publish until the reader has its start point and sees one
            data = f"new {len(published)}"
            published.append(
                BusEntry(await bus.publish(stream, data, retention_seconds=RETENTION, maxlen=MAXLEN), data)
            )
            await asyncio.wait({reader}, timeout=0.05)
    got = reader.result()
    assert got and not set(got) & set(old)
    start = published.index(got[0])
    assert got == published[start : start + len(got)]


async def test_read_with_nothing_new_returns_empty_after_block_ms(bus: EventBus, stream: str) -> None:
    loop = asyncio.get_running_loop()
    (last,) = await _publish_many(bus, stream, 1)
    started = loop.time()
    assert await bus.read(stream, last.id, block_ms=150) == []
    assert 0.12 <= loop.time() - started < 2
    started = loop.time()
    assert await bus.read(f"{stream}:never-written", "0", block_ms=100) == []
    assert 0.08 <= loop.time() - started < 2
    started = loop.time()
    assert await bus.read(stream, last.id, block_ms=0) == []
    assert loop.time() - started < 1


async def test_maxlen_trims_approximately_keeping_the_newest(bus: EventBus, stream: str, raw: Redis) -> None:
    # `MAXLEN ~` drops whole stream nodes (100 entries by default), so 250 entries with maxlen 10 must trim.
    published = await _publish_many(bus, stream, 250, maxlen=10)
    kept = await bus.read(stream, "0", block_ms=0, count=1000)
    assert 10 <= len(kept) < len(published)
    assert kept == published[-len(kept) :], "trimming must drop the oldest entries and only those"
    assert await raw.xlen(stream) == len(kept)
    first = await bus.first_id(stream)
    assert first == kept[0].id and _key(first) > _key(published[0].id)
    assert await bus.last_id(stream) == published[-1].id


async def test_publish_sets_and_refreshes_the_retention_expire(bus: EventBus, stream: str, raw: Redis) -> None:
    await bus.publish(stream, "a", retention_seconds=300, maxlen=MAXLEN)
    assert 0 < await raw.ttl(stream) <= 300
    await bus.publish(stream, "b", retention_seconds=3600, maxlen=MAXLEN)
    assert 300 < await raw.ttl(stream) <= 3600


async def test_a_writer_answers_what_came_before_and_leaves_the_expiry_when_asked(
    bus: EventBus, stream: str, raw: Redis
) -> None:
    first = await bus.publish_items(stream, ["a", "b"], retention_seconds=300, maxlen=MAXLEN, writer="w1", seq=0)
    assert first.previous == "0-0" and len(first.ids) == 2  # a new stream: nothing before
    assert 0 < await raw.ttl(stream) <= 300
    await raw.expire(stream, 50)
    other = await bus.publish_items(stream, ["c"], retention_seconds=0, maxlen=MAXLEN, writer="w2", seq=0)
    assert other.previous == first.ids[-1]  # the stream's newest entry, whoever wrote it
    assert 0 < await raw.ttl(stream) <= 50  # 0: the expiry is left as it was
    again = await bus.publish_items(stream, ["c"], retention_seconds=0, maxlen=MAXLEN, writer="w2", seq=0)
    assert again.ids == other.ids and again.previous is None  # sent again: nothing new, and no claim of adjacency
    third = await bus.publish_items(stream, ["d"], retention_seconds=600, maxlen=MAXLEN, writer="w1", seq=2)
    assert third.previous == other.ids[-1] and 300 < await raw.ttl(stream) <= 600


async def test_a_stream_writer_sets_the_expiry_on_its_first_and_final_batches_not_every_one(
    bus: EventBus, stream: str, raw: Redis
) -> None:
    writer = StreamWriter(bus, stream, retention_seconds=300, maxlen=MAXLEN, what="test")
    await writer.send(["a"])
    assert 0 < await raw.ttl(stream) <= 300
    await raw.expire(stream, 50)
    await writer.send(["b"])
    assert await raw.ttl(stream) <= 50  # within a minute of the last refresh: left alone
    await writer.send(["c"], final=True)
    assert 50 < await raw.ttl(stream) <= 300


async def test_expired_or_missing_stream_has_no_ids_and_no_entries(bus: EventBus, stream: str, raw: Redis) -> None:
    assert await bus.first_id(stream) is None
    assert await bus.last_id(stream) is None
    assert await bus.last_entry(stream) is None
    await _publish_many(bus, stream, 3)
    assert await bus.first_id(stream) is not None
    await raw.expire(stream, 0)  # retention runs out now rather than in 24 h (a non-positive TTL expires at once)
    assert not await raw.exists(stream)
    assert await bus.first_id(stream) is None
    assert await bus.last_id(stream) is None
    assert await bus.last_entry(stream) is None
    assert await bus.read(stream, "0", block_ms=0) == []


LEASE_MS = 60_000
NOW_MS = 1_800_000_000_000


@pytest.fixture
def slots() -> str:
    return f"pa:slots:test:{uuid.uuid4()}"


async def test_slots_cap_holders_and_a_release_frees_one(bus: EventBus, slots: str, raw: Redis) -> None:
    take = functools.partial(bus.acquire_slot, slots, limit=2, lease_ms=LEASE_MS)
    assert await take("a", now_ms=NOW_MS) == 0
    assert await take("b", now_ms=NOW_MS + 10) == 0
    assert await take("c", now_ms=NOW_MS + 20) == LEASE_MS - 20  # until a's lease ends
    assert await take("a", now_ms=NOW_MS + 30) == 0, "a holder that asks again keeps its slot"
    await bus.release_slot(slots, "b")
    assert await take("c", now_ms=NOW_MS + 40) == 0
    assert await raw.zcard(slots) == 2
    assert 0 < await raw.pttl(slots) <= LEASE_MS


async def test_slots_never_released_lapse_with_their_lease(bus: EventBus, slots: str, raw: Redis) -> None:
    """A relay that died holding slots (nobody releases them) blocks the user for one lease at most."""
    take = functools.partial(bus.acquire_slot, slots, limit=2, lease_ms=LEASE_MS)
    assert await take("dead-1", now_ms=NOW_MS) == 0
    assert await take("dead-2", now_ms=NOW_MS) == 0
    assert await take("new", now_ms=NOW_MS + LEASE_MS - 1) == 1
    assert await take("new", now_ms=NOW_MS + LEASE_MS + 1) == 0
    assert await raw.zrange(slots, 0, -1) == ["new"]


async def test_a_renewed_slot_outlives_its_first_lease(bus: EventBus, slots: str) -> None:
    assert await bus.acquire_slot(slots, "live", limit=1, lease_ms=LEASE_MS, now_ms=NOW_MS) == 0
    await bus.renew_slot(slots, "live", lease_ms=LEASE_MS, now_ms=NOW_MS + 50_000)
    later = NOW_MS + LEASE_MS + 10_000
    assert await bus.acquire_slot(slots, "other", limit=1, lease_ms=LEASE_MS, now_ms=later) == 40_000
    await bus.release_slot(slots, "live")
    assert await bus.acquire_slot(slots, "other", limit=1, lease_ms=LEASE_MS, now_ms=later) == 0


async def test_ping(bus: EventBus) -> None:
    assert await bus.ping() is True


async def test_backends_share_one_stream_format(redis_url: str, bridge_url: str, stream: str) -> None:
    """Entries written by one backend read back identically through the other (same ids, same payloads)."""
    tcp, rest = RedisStreamsBus(redis_url), UpstashBus(bridge_url, TOKEN)
    try:
        written = await _publish_many(tcp, stream, 3) + await _publish_many(rest, stream, 3)
        assert await tcp.read(stream, "0", block_ms=0) == written
        assert await rest.read(stream, "0", block_ms=0) == written
    finally:
        await tcp.close()
        await rest.close()


async def test_wrong_upstash_token_is_a_clear_error(bridge_url: str, stream: str) -> None:
    bad = UpstashBus(bridge_url, "not-the-token")
    try:
        with pytest.raises(UpstashBusError, match="WRONGPASS.*UPSTASH_REDIS_REST_TOKEN") as refused:
            await bad.ping()
        assert "not-the-token" not in str(refused.value)
        with pytest.raises(UpstashBusError, match="publish .*WRONGPASS"):
            await bad.publish(stream, "x", retention_seconds=RETENTION, maxlen=MAXLEN)
        with pytest.raises(UpstashBusError, match="read .*WRONGPASS"):
            await bad.read(stream, "0", block_ms=0)
    finally:
        await bad.close()
    async with httpx.AsyncClient() as http:
        response = await http.post(bridge_url, json=["PING"])
    assert response.status_code == 401 and "error" in response.json()


async def test_unreachable_upstash_is_a_clear_error(stream: str) -> None:
    from personal_agent.local.ports import free_port

    gone = UpstashBus(f"http://127.0.0.1:{free_port()}", TOKEN)
    try:
        with pytest.raises(UpstashBusError, match="ping at http://127.0.0.1"):
            await gone.ping()
    finally:
        await gone.close()


async def test_bridge_speaks_upstash_rest(bridge_url: str, stream: str) -> None:
    """The bridge's own shapes: base64 only when asked, pipelines, transactions, no blocking reads."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    b64 = {**auth, "Upstash-Encoding": "base64"}
    async with httpx.AsyncClient(base_url=bridge_url) as http:
        assert (await http.post("/", json=["PING"], headers=auth)).json() == {"result": "PONG"}
        assert (await http.post("/", json=["PING"], headers=b64)).json() == {"result": "UE9ORw=="}
        multi = await http.post(
            "/multi-exec", json=[["XADD", stream, "*", "d", "v"], ["EXPIRE", stream, 60]], headers=auth
        )
        entry_id, expire = multi.json()
        assert _key(entry_id["result"]) and expire == {"result": 1}
        piped = await http.post("/pipeline", json=[["XLEN", stream], ["INCR", stream]], headers=auth)
        assert piped.json()[0] == {"result": 1} and "WRONGTYPE" in piped.json()[1]["error"]
        blocking = await http.post("/", json=["XREAD", "BLOCK", 100, "STREAMS", stream, "$"], headers=auth)
        assert blocking.status_code == 400 and "blocking" in blocking.json()["error"]


async def test_factory_picks_upstash_when_configured(
    bridge_url: str, stream: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await reset_bus()
    monkeypatch.setenv("UPSTASH_REDIS_REST_URL", bridge_url)
    monkeypatch.setenv("UPSTASH_REDIS_REST_TOKEN", TOKEN)
    get_settings.cache_clear()
    try:
        chosen = get_bus()
        assert isinstance(chosen, UpstashBus)
        entry_id = await chosen.publish(stream, "via factory", retention_seconds=RETENTION, maxlen=MAXLEN)
        assert await chosen.read(stream, "0", block_ms=0) == [BusEntry(entry_id, "via factory")]
    finally:
        await reset_bus()
        monkeypatch.undo()
        get_settings.cache_clear()


async def test_a_batch_appends_in_order_with_one_id_per_item_and_sets_the_expiry(
    bus: EventBus, stream: str, raw: Redis
) -> None:
    single = await _publish_many(bus, stream, 3)
    data = [_payload(i) for i in range(3, 53)]
    ids = await bus.publish_batch(stream, data, retention_seconds=RETENTION, maxlen=MAXLEN)
    assert len(ids) == 50 and len(set(ids)) == 50
    published = single + [BusEntry(i, d) for i, d in zip(ids, data, strict=True)]
    keys = [_key(e.id) for e in published]
    assert keys == sorted(keys)
    assert await bus.read(stream, "0", block_ms=0, count=1000) == published
    for k, entry in enumerate(published):  # a resume point inside the batch gives exactly the rest
        assert await bus.read(stream, entry.id, block_ms=0, count=1000) == published[k + 1 :], f"after #{k}"
    assert 0 < await raw.ttl(stream) <= RETENTION
    # The batch is ONE stream entry: its last item has the entry's id, the others `<entry id>.<index>`.
    assert await raw.xlen(stream) == 3 + 1
    assert ids[-1] == await bus.last_id(stream) and ids[:-1] == [f"{ids[-1]}.{i}" for i in range(49)]
    assert await bus.last_entry(stream) == published[-1]
    assert await bus.publish_batch(stream, [], retention_seconds=RETENTION, maxlen=MAXLEN) == []


async def test_a_counter_starts_at_zero_and_every_bump_is_seen_by_every_client(bus: EventBus, raw: Redis) -> None:
    key = f"pa:test:counter:{uuid.uuid4().hex}"
    try:
        assert await bus.counter(key) == 0
        assert await bus.bump(key) == 1
        await raw.incr(key)  # another process
        assert await bus.counter(key) == 2
    finally:
        await raw.delete(key)


async def test_reads_page_through_a_batch_entry_by_item_and_never_wait_inside_one(bus: EventBus, stream: str) -> None:
    data = [_payload(i) for i in range(20)]
    ids = await bus.publish_batch(stream, data, retention_seconds=RETENTION, maxlen=MAXLEN)
    tail = await _publish_many(bus, stream, 2)
    published = [BusEntry(i, d) for i, d in zip(ids, data, strict=True)] + tail
    assert await bus.first_id(stream) == ids[0] == f"{ids[-1]}.0"
    received: list[BusEntry] = []
    cursor = "0"
    while page := await bus.read(stream, cursor, block_ms=5_000, count=7):  # a page may end inside the entry
        assert len(page) <= 7
        received.extend(page)
        cursor = page[-1].id
        if cursor == tail[-1].id:
            break
    assert received == published
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await bus.read(stream, ids[5], block_ms=10_000, count=3) == published[6:9]
    assert loop.time() - started < 2, "a read from inside an entry has items to answer at once"


async def test_a_batch_whose_entry_was_trimmed_resumes_with_what_follows(
    bus: EventBus, stream: str, raw: Redis
) -> None:
    ids = await bus.publish_batch(stream, ["a", "b", "c"], retention_seconds=RETENTION, maxlen=MAXLEN)
    later = await bus.publish(stream, "d", retention_seconds=RETENTION, maxlen=MAXLEN)
    await raw.xdel(stream, ids[-1])
    assert await bus.read(stream, ids[0], block_ms=0) == [BusEntry(later, "d")]
    assert await bus.first_id(stream) == later


async def test_an_item_of_more_than_one_line_is_refused(bus: EventBus, stream: str, raw: Redis) -> None:
    with pytest.raises(ValueError, match="one line"):
        await bus.publish_batch(stream, ["ok", "two\nlines"], retention_seconds=RETENTION, maxlen=MAXLEN)
    with pytest.raises(ValueError, match="one line"):
        await bus.publish(stream, "carriage\rreturn", retention_seconds=RETENTION, maxlen=MAXLEN)
    assert not await raw.exists(stream), "nothing of a refused batch is written"


async def test_a_patient_upstash_reader_polls_less_often_and_still_gets_what_comes(
    bridge_url: str, stream: str
) -> None:
    """REST cannot block, so an idle reader polls, each poll a billed command: a feed (patience 2 s) polls a few
    times where a run's stream polls four times a second, and still returns what is published meanwhile."""
    bus = UpstashBus(bridge_url, TOKEN)
    polls = 0
    polled = asyncio.Event()
    xread = bus._xread

    async def counted(*args: object) -> list[BusEntry]:
        nonlocal polls
        polls += 1
        result = await xread(*args)  # type: ignore[arg-type]
        polled.set()
        return result

    bus._xread = counted  # type: ignore[method-assign]
    try:
        await bus.read(stream, "0-0", block_ms=6_000)
        eager, polls = polls, 0
        await bus.read(stream, "0-0", block_ms=6_000, patience_ms=2_000)
        patient, polls = polls, 0
        assert patient * 2 < eager, (patient, eager)
        polled.clear()
        reader = asyncio.create_task(bus.read(stream, "0-0", block_ms=20_000, patience_ms=2_000))
        await asyncio.wait_for(polled.wait(), timeout=5)  # it polled once and found nothing: it waits now
        entry_id = await bus.publish(stream, "late", retention_seconds=RETENTION, maxlen=MAXLEN)
        assert await asyncio.wait_for(reader, timeout=5) == [BusEntry(entry_id, "late")]
    finally:
        await bus.close()
