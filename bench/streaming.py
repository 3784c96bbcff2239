"""Streaming figures, all measured in one run against the embedded Postgres and Valkey on loopback.

1. The floor: raw XADD -> XREAD BLOCK latency, then the bus itself (publish -> read, no HTTP).
2. bus.publish -> SSE client latency through the relay (`functions.stream.app` in its own uvicorn
   process), as a ratio of the floor. Target: p50 within 5x the floor, p99 under 10 ms.
3. 500 concurrent SSE clients on that one relay process: events/s delivered, the process RSS, and
   where the CPU went (relay, Valkey, this process).
4. POST /chats/{id}/runs -> first event on the SSE stream with a zero-latency scripted model (the dev
   app in-process, so the model registered here is visible), beside one authenticated GET.

Figures are printed, never asserted. Run from the repo root: `.venv/bin/python bench/streaming.py`
(`--help` for the counts). Every latency is stamped with `time.perf_counter_ns` in this process:
the publisher and the SSE client both live here, only the relay is elsewhere. The relay serves the
code as it is; `--relay-app` swaps in another ASGI app and `--relay-redis-options` passes redis-py
options (e.g. `max_connections=1000&socket_timeout=30`) to compare a candidate change in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import resource
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # `tests.live_server`, `functions.stream` and `bench.*` live beside `shared/`

from bench.raw_sse import RawSseClient  # noqa: E402
from bench.relay_process import HOST, RelayProcess  # noqa: E402

RETENTION_S = 600
MAXLEN = 100_000
PAD = "x" * 48  # payloads of about 120 bytes, the size of a TEXT_MESSAGE_CONTENT event
SENT = b'"sent_ns":'
# Env the stack would otherwise take from a developer's shell or .env; "" reads as unset, so the
# embedded Postgres and Valkey start here whatever the machine has configured.
BLANKED = (
    "DATABASE_URL",
    "DATABASE_ADMIN_URL",
    "REDIS_URL",
    "AWS_ENDPOINT_URL",
    "UPSTASH_REDIS_REST_URL",
    "UPSTASH_REDIS_REST_TOKEN",
    "PA_STATE_MACHINE_ARN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "PA_OPENAI_COMPATIBLE_BASE_URL",
)


# ---- figures -------------------------------------------------------------------------------------


def percentile(samples: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100)."""
    ordered = sorted(samples)
    k = (len(ordered) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms" if ns < 1e7 else f"{ns / 1e6:.1f} ms"


@dataclass
class Report:
    sections: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)

    def section(self, title: str) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = []
        self.sections.append((title, rows))
        return rows

    def show(self, header: str) -> None:
        print(f"\n{header}")
        for title, rows in self.sections:
            if not rows:
                continue
            print(f"\n{title}")
            width = max(len(name) for name, _ in rows)
            for name, value in rows:
                print(f"  {name:<{width}}  {value}")


def latency_row(samples: list[int], floor: list[int] | None = None) -> str:
    p50, p99 = percentile(samples, 50), percentile(samples, 99)
    text = f"p50 {ms(p50):>9}   p99 {ms(p99):>9}   max {ms(max(samples)):>9}   n={len(samples)}"
    if floor:
        text += f"   p50 {p50 / percentile(floor, 50):.1f}x / p99 {p99 / percentile(floor, 99):.1f}x the floor"
    return text


def payload(seq: int) -> str:
    """A CUSTOM event stamped with its send time, taken as late as possible before it is published."""
    value = f'{{"pad":"{PAD}","seq":{seq},"sent_ns":{time.perf_counter_ns()}}}'
    return f'{{"type":"CUSTOM","name":"bench","value":{value}}}'


def sent_ns(data: bytes | str) -> int | None:
    """The send stamp of a bench event (None for any other event, such as the terminal one)."""
    raw = data.encode() if isinstance(data, str) else data
    start = raw.find(SENT)
    if start < 0:
        return None
    start += len(SENT)
    return int(raw[start : raw.find(b"}", start)])


TERMINAL = '{"type":"RUN_FINISHED","threadId":"bench","runId":"bench","outcome":{"type":"success"}}'


# ---- the stack, a tenant, runs ---------------------------------------------------------------------


@dataclass(frozen=True)
class Tenant:
    org_id: uuid.UUID
    user_id: uuid.UUID
    slug: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@contextmanager
def local_stack(data_dir: Path) -> Iterator[Any]:
    """The embedded Postgres and Valkey on free ports with their data in `data_dir` (no moto: not needed)."""
    from personal_agent.local.ports import free_port
    from personal_agent.local.stack import LocalStack
    from personal_agent.settings import Settings, get_settings

    os.environ.update(dict.fromkeys(BLANKED, ""))
    os.environ.update(
        PA_ENV="local",
        PA_DATA_DIR=str(data_dir),
        PA_VALKEY_PORT=str(free_port()),
        PA_LOG_LEVEL="WARNING",
        ALLOW_MODEL_REQUESTS="false",
    )
    get_settings.cache_clear()
    stack = LocalStack(Settings())
    try:
        yield stack.start(with_aws=False)
    finally:
        stack.stop()
        get_settings.cache_clear()


def make_tenant() -> Tenant:
    """An org with one user, inserted as the database owner, and a dev token for that user."""
    import psycopg

    from personal_agent.identity.dev_issuer import DevIssuer
    from personal_agent.settings import get_settings

    settings = get_settings()
    slug, subject = f"bench-{uuid.uuid4().hex[:8]}", f"bench-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as conn:
        org = conn.execute("INSERT INTO orgs (slug, name) VALUES (%s, %s) RETURNING id", [slug, slug]).fetchone()
        user = conn.execute(
            "INSERT INTO users (issuer, subject, email) VALUES (%s, %s, %s) RETURNING id",
            [settings.dev_issuer, subject, f"{subject}@example.test"],
        ).fetchone()
        assert org and user
        conn.execute(
            "INSERT INTO memberships (org_id, user_id, roles) VALUES (%s, %s, %s)", [org[0], user[0], ["user"]]
        )
    token = DevIssuer.from_settings(settings).mint(subject=subject, orgs=[slug], roles=("user",))
    return Tenant(org[0], user[0], slug, token)


def insert_running_runs(tenant: Tenant, count: int) -> list[uuid.UUID]:
    """Run rows in status `running`, so the relay streams them (nothing drives them but this bench)."""
    import psycopg

    ids = [uuid.uuid4() for _ in range(count)]
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as conn, conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO runs (id, org_id, user_id, status, mode, spec, started_at)"
            " VALUES (%s, %s, %s, 'running', 'inline', '{}'::jsonb, now())",
            [(run_id, tenant.org_id, tenant.user_id) for run_id in ids],
        )
    return ids


# ---- 1 & 2: latency, one event in flight at a time ----------------------------------------------


@dataclass
class Probe:
    """One publish -> receive path: `send` publishes a stamped event, its reader queues the latency."""

    name: str
    send: Callable[[int], Awaitable[object]]
    received: asyncio.Queue[int]
    reader: asyncio.Task[None]
    close: Callable[[], Awaitable[None]]


async def floor_probe() -> Probe:
    """Raw XADD on one connection -> XREAD BLOCK on another, with the client library the bus uses."""
    import redis.asyncio as aioredis

    url = os.environ["REDIS_URL"]
    writer = aioredis.from_url(url, decode_responses=True)
    reader = aioredis.from_url(url, decode_responses=True)
    stream = f"bench:floor:{uuid.uuid4().hex}"
    received: asyncio.Queue[int] = asyncio.Queue()

    async def read_loop() -> None:
        cursor = "0-0"
        while True:
            result = await reader.xread({stream: cursor}, block=2000)
            now = time.perf_counter_ns()
            for _name, items in result or []:
                for entry_id, fields in items:
                    cursor = entry_id
                    received.put_nowait(now - (sent_ns(fields["d"]) or now))

    async def send(seq: int) -> str:
        return str(await writer.xadd(stream, {"d": payload(seq)}))

    async def close() -> None:
        await writer.delete(stream)
        await writer.aclose()
        await reader.aclose()

    return Probe("XADD -> XREAD BLOCK (floor)", send, received, asyncio.create_task(read_loop()), close)


async def bus_probe() -> Probe:
    """`bus.publish` (MULTI: XADD + EXPIRE) -> `bus.read` (XREAD BLOCK): the relay's own calls, minus HTTP."""
    from personal_agent.bus import get_bus

    bus = get_bus()
    stream = f"bench:bus:{uuid.uuid4().hex}"
    received: asyncio.Queue[int] = asyncio.Queue()

    async def read_loop() -> None:
        cursor = "0"
        while True:
            entries = await bus.read(stream, cursor, block_ms=2000)
            now = time.perf_counter_ns()
            for entry in entries:
                cursor = entry.id
                received.put_nowait(now - (sent_ns(entry.data) or now))

    async def send(seq: int) -> str:
        return await bus.publish(stream, payload(seq), retention_seconds=RETENTION_S, maxlen=MAXLEN)

    async def close() -> None:
        pass

    return Probe("bus.publish -> bus.read", send, received, asyncio.create_task(read_loop()), close)


async def sse_probe(tenant: Tenant, port: int) -> Probe:
    """`bus.publish` to a running run's stream -> the frame parsed by an SSE client of the relay process."""
    from personal_agent.bus import get_bus
    from personal_agent.bus.keys import run_stream

    bus = get_bus()
    (run_id,) = insert_running_runs(tenant, 1)
    stream = run_stream(tenant.org_id, run_id)
    client = await RawSseClient.connect(HOST, port, f"/api/v1/runs/{run_id}/events", tenant.headers)
    received: asyncio.Queue[int] = asyncio.Queue()

    async def read_loop() -> None:
        async for data in client.frames():
            now = time.perf_counter_ns()
            sent = sent_ns(data)
            if sent is not None:
                received.put_nowait(now - sent)

    async def send(seq: int) -> str:
        return await bus.publish(stream, payload(seq), retention_seconds=RETENTION_S, maxlen=MAXLEN)

    async def close() -> None:
        await bus.publish(stream, TERMINAL, retention_seconds=RETENTION_S, maxlen=MAXLEN)
        await client.close()

    return Probe("bus.publish -> SSE client (relay)", send, received, asyncio.create_task(read_loop()), close)


async def interleaved_latency(probes: list[Probe], count: int, warmup: int, gap_s: float) -> dict[str, list[int]]:
    """Take the probes' samples in turn (rotating which goes first), so a load spike on a shared machine
    lands on every series alike; one event in flight at a time, `gap_s` apart; `warmup` rounds dropped."""
    samples: dict[str, list[int]] = {probe.name: [] for probe in probes}
    try:
        for seq in range(warmup + count):
            for k in range(len(probes)):
                probe = probes[(seq + k) % len(probes)]
                await probe.send(seq)
                latency = await asyncio.wait_for(probe.received.get(), timeout=10)
                if seq >= warmup:
                    samples[probe.name].append(latency)
                await asyncio.sleep(gap_s)
    finally:
        for probe in probes:
            await probe.close()
            probe.reader.cancel()
        await asyncio.gather(*(probe.reader for probe in probes), return_exceptions=True)
    return samples


# ---- 3: many clients on one relay process ---------------------------------------------------------


@dataclass
class Delivery:
    """What one SSE client received: bench frames counted, with their latencies."""

    target: int
    frames: int = 0
    reached_ns: int | None = None
    dropped: bool = False  # the relay ended the stream before `target` frames
    latencies: list[int] = field(default_factory=list)


@dataclass
class LoadFigures:
    clients: int
    streams: int
    connect_s: float
    connect_cpu_s: float | None
    refused: list[str]
    dropped: int
    failures: Counter[str]  # responses the relay failed, by exception
    frames: int
    wall_s: float
    latencies: list[int]
    rss_before: float | None
    rss_connected: float | None
    rss_after: float | None
    relay_cpu_s: float | None
    valkey_cpu_s: float
    bench_cpu_s: float


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def valkey_cpu_seconds() -> float:
    import redis.asyncio as aioredis

    client = aioredis.from_url(os.environ["REDIS_URL"], decode_responses=True)
    try:
        info = await client.info("cpu")
    finally:
        await client.aclose()
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


async def xadd_rounds(keys: list[str], rounds: int, data: Callable[[int], str], rate: float = 0.0) -> None:
    """`rounds` rounds, each one entry to every stream in a single pipelined round trip; unpaced when `rate` is 0,
    else `rate` rounds per second. A cheap publisher, so the relay, not this process, is what saturates."""
    import redis.asyncio as aioredis

    client = aioredis.from_url(os.environ["REDIS_URL"], decode_responses=True)
    started = time.perf_counter()
    try:
        for seq in range(rounds):
            if rate:
                await asyncio.sleep(max(0.0, started + seq / rate - time.perf_counter()))
            async with client.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.xadd(key, {"d": data(seq)}, maxlen=MAXLEN, approximate=True)
                await pipe.execute()
    finally:
        await client.aclose()


async def many_clients(
    tenant: Tenant, relay: RelayProcess, clients: int, streams: int, events: int, rate: float
) -> LoadFigures:
    """`clients` SSE clients spread over `streams` running runs; `events` published to each stream."""
    from personal_agent.bus.keys import run_stream

    run_ids = insert_running_runs(tenant, streams)
    keys = [run_stream(tenant.org_id, run_id) for run_id in run_ids]
    rss_before, failures_before = relay.rss_mib(), relay.failed_responses()
    gate = asyncio.Semaphore(64)  # clients arrive in waves, not as one SYN flood

    async def connect(run_id: uuid.UUID) -> RawSseClient:
        async with gate:
            return await RawSseClient.connect(HOST, relay.port, f"/api/v1/runs/{run_id}/events", tenant.headers)

    started, connect_cpu = time.perf_counter(), relay.cpu_seconds()
    opened = await asyncio.gather(*(connect(run_ids[i % streams]) for i in range(clients)), return_exceptions=True)
    connect_s, connect_cpu_after = time.perf_counter() - started, relay.cpu_seconds()
    conns = [c for c in opened if isinstance(c, RawSseClient)]
    refused = [f"{type(c).__name__}: {c}" for c in opened if not isinstance(c, RawSseClient)]
    await asyncio.sleep(0.5)  # let every relay generator reach its XREAD BLOCK
    rss_connected = relay.rss_mib()

    deliveries = [Delivery(events) for _ in conns]
    all_settled = asyncio.Event()
    settled = 0

    def settle() -> None:
        nonlocal settled
        settled += 1
        if settled == len(deliveries):
            all_settled.set()

    async def consume(conn: RawSseClient, delivery: Delivery) -> None:
        async for data in conn.frames():
            now = time.perf_counter_ns()
            sent = sent_ns(data)
            if sent is None:
                continue
            delivery.frames += 1
            delivery.latencies.append(now - sent)
            if delivery.frames == delivery.target:
                delivery.reached_ns = now
                settle()
        if delivery.reached_ns is None:
            delivery.dropped = True
            settle()

    readers = [asyncio.create_task(consume(c, d)) for c, d in zip(conns, deliveries, strict=True)]
    relay_cpu, valkey_cpu, bench_cpu = relay.cpu_seconds(), await valkey_cpu_seconds(), own_cpu_seconds()
    start_ns = time.perf_counter_ns()
    await xadd_rounds(keys, events, payload, rate)
    try:
        await asyncio.wait_for(all_settled.wait(), timeout=120)
    except TimeoutError:
        print(f"  ! {len(deliveries) - settled} clients still short of {events} events after 120 s", flush=True)
    end_ns = max((d.reached_ns or 0 for d in deliveries), default=0) or time.perf_counter_ns()
    relay_after, valkey_after, bench_after = relay.cpu_seconds(), await valkey_cpu_seconds(), own_cpu_seconds()
    rss_after = relay.rss_mib()

    await xadd_rounds(keys, 1, lambda _: TERMINAL)  # the relay closes a run's response after its terminal event
    await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), timeout=30)
    await asyncio.gather(*(c.close() for c in conns))
    failures = relay.failed_responses() - failures_before
    return LoadFigures(
        clients=clients,
        streams=streams,
        connect_s=connect_s,
        connect_cpu_s=None if connect_cpu is None or connect_cpu_after is None else connect_cpu_after - connect_cpu,
        refused=refused,
        dropped=sum(d.dropped for d in deliveries),
        failures=failures,
        frames=sum(d.frames for d in deliveries),
        wall_s=(end_ns - start_ns) / 1e9,
        latencies=[lat for d in deliveries for lat in d.latencies],
        rss_before=rss_before,
        rss_connected=rss_connected,
        rss_after=rss_after,
        relay_cpu_s=None if relay_cpu is None or relay_after is None else relay_after - relay_cpu,
        valkey_cpu_s=valkey_after - valkey_cpu,
        bench_cpu_s=bench_after - bench_cpu,
    )


def load_rows(rows: list[tuple[str, str]], label: str, f: LoadFigures, rate: float) -> None:
    def mib(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1f} MiB"

    per_client = ""
    if f.rss_before is not None and f.rss_connected is not None:
        per_client = f"  (+{(f.rss_connected - f.rss_before) * 1024 / f.clients:.0f} KiB per client)"
    delivered = f"{f.frames / f.wall_s:,.0f} events/s  ({f.frames:,} frames in {f.wall_s:.2f} s)"
    rows.append((f"{label}: delivered", delivered))
    served = f.clients - len(f.refused) - f.dropped
    lost = f"{served} of {f.clients} got every event; {len(f.refused)} refused at connect, {f.dropped} cut off early"
    if f.refused:
        lost += f" (first refusal: {f.refused[0][:120]})"
    rows.append((f"{label}: clients served", lost))
    for error, count in f.failures.most_common(3):
        rows.append((f"{label}: relay failed", f"{count} responses: {error[:110]}"))
    connect = f"{f.connect_s:.2f} s  ({f.clients / f.connect_s:,.0f} connections/s"
    if f.connect_cpu_s is not None:
        connect += f", relay CPU {f.connect_cpu_s * 1000 / f.clients:.1f} ms each"
    rows.append((f"{label}: connect", connect + ")"))
    rss = f"{mib(f.rss_before)} before -> {mib(f.rss_connected)} connected -> {mib(f.rss_after)} after{per_client}"
    rows.append((f"{label}: relay RSS", rss))
    cpu = f"valkey {f.valkey_cpu_s * 1e6 / f.frames:.1f}, this process {f.bench_cpu_s * 1e6 / f.frames:.1f}"
    if f.relay_cpu_s is not None:
        cpu = f"relay {f.relay_cpu_s * 1e6 / f.frames:.1f}, " + cpu
    rows.append((f"{label}: CPU us per frame", cpu))
    if rate:  # unpaced, latency is only how long the backlog took to drain
        rows.append((f"{label}: latency at {rate:g} events/s per run", latency_row(f.latencies)))


# ---- 4: POST /runs -> first event, in-process dev app ----------------------------------------------


@dataclass
class RunTimings:
    post: list[int] = field(default_factory=list)
    first_event: list[int] = field(default_factory=list)
    first_text: list[int] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)
    get_run: list[int] = field(default_factory=list)
    cold_first_event: int | None = None


async def time_to_first_event(tenant: Tenant, runs: int, warmup: int) -> RunTimings:
    """POST a run with a model that answers at once, then open its events URL; time each milestone from the POST."""
    import httpx
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from personal_agent.local.dev_app import create_dev_app
    from personal_agent.models.catalog import register_model, unregister_model
    from tests.live_server import LiveServer

    async def instant(messages: list[Any], info: AgentInfo) -> Any:
        yield "ok"

    model_id = f"bench:{uuid.uuid4().hex[:8]}"
    register_model(model_id, lambda: FunctionModel(stream_function=instant, model_name="bench-instant"))
    server = LiveServer(create_dev_app()).start()
    timings = RunTimings()
    try:
        async with httpx.AsyncClient(base_url=server.url, headers=tenant.headers, timeout=30) as http:
            for i in range(warmup + runs):
                chat = await http.post("/api/v1/chats", json={"title": "bench"})
                chat.raise_for_status()
                body = {"message": "hi", "model": model_id, "mode": "inline"}
                t0 = time.perf_counter_ns()
                started = await http.post(f"/api/v1/chats/{chat.json()['id']}/runs", json=body)
                t_post = time.perf_counter_ns()
                started.raise_for_status()
                sse = await RawSseClient.connect(HOST, server.port, started.json()["events_url"], tenant.headers)
                t_first = t_text = None
                async for data in sse.frames():
                    now = time.perf_counter_ns()
                    t_first = t_first or now
                    if t_text is None and b'"TEXT_MESSAGE_CONTENT"' in data:
                        t_text = now
                t_end = time.perf_counter_ns()
                await sse.close()
                t_get = time.perf_counter_ns()
                (await http.get(started.json()["status_url"])).raise_for_status()
                t_got = time.perf_counter_ns()
                if t_first is None or t_text is None:
                    raise RuntimeError(f"run {started.json()['run_id']} streamed no text")
                if i == 0:
                    timings.cold_first_event = t_first - t0
                if i < warmup:
                    continue
                timings.post.append(t_post - t0)
                timings.first_event.append(t_first - t0)
                timings.first_text.append(t_text - t0)
                timings.finished.append(t_end - t0)
                timings.get_run.append(t_got - t_get)
    finally:
        server.stop()
        unregister_model(model_id)
    return timings


# ---- main -----------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    class Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
        pass

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=Formatter)
    parser.add_argument("--samples", type=int, default=1000, help="latency samples per series")
    parser.add_argument("--warmup", type=int, default=50, help="samples dropped before each series")
    parser.add_argument("--gap-ms", type=float, default=1.0, help="pause between latency samples")
    parser.add_argument("--clients", type=int, default=500, help="concurrent SSE clients")
    parser.add_argument("--fanout-events", type=int, default=100, help="events to the one run every client watches")
    parser.add_argument("--per-run-events", type=int, default=40, help="events to each run, one client per run")
    parser.add_argument("--rate", type=float, default=0, help="events/s per run in the load test; 0: unpaced")
    parser.add_argument("--runs", type=int, default=30, help="runs timed POST -> first event")
    parser.add_argument("--relay-app", default="functions.stream.app:app", help="ASGI app the relay process serves")
    parser.add_argument("--relay-log", type=Path, help="keep the relay process's log here; None: discarded")
    parser.add_argument(
        "--relay-redis-options",
        metavar="QUERY",
        help="redis-py options for the relay as a URL query, e.g. 'max_connections=1000&socket_timeout=30'"
        "; None: the URL as configured",
    )
    return parser.parse_args()


async def measure(args: argparse.Namespace, tenant: Tenant, relay: RelayProcess, report: Report) -> None:
    step("1-2/4 latency: XADD -> XREAD BLOCK, bus.publish -> bus.read, bus.publish -> SSE client (interleaved)")
    probes = [await floor_probe(), await bus_probe(), await sse_probe(tenant, relay.port)]
    series = await interleaved_latency(probes, args.samples, args.warmup, args.gap_ms / 1000)
    floor, bus, sse = (series[probe.name] for probe in probes)
    rows = report.section(f"Latency, one event in flight, {args.gap_ms:g} ms apart, the three paths interleaved")
    rows.append((probes[0].name, latency_row(floor)))
    rows.append((probes[1].name, latency_row(bus, floor)))
    rows.append((probes[2].name, latency_row(sse, floor)))
    p50_ratio, p99 = percentile(sse, 50) / percentile(floor, 50), percentile(sse, 99)
    verdict = f"p50 {p50_ratio:.1f}x floor ({'met' if p50_ratio <= 5 else 'missed'}), "
    verdict += f"p99 {ms(p99)} ({'met' if p99 < 10e6 else 'missed'})"
    rows.append(("target: p50 <= 5x floor, p99 < 10 ms", verdict))

    step(f"3/4 {args.clients} SSE clients on one relay process")
    rows = report.section(f"{args.clients} concurrent SSE clients on one relay process (uvicorn, asyncio loop)")
    fanout = await many_clients(tenant, relay, args.clients, 1, args.fanout_events, args.rate)
    load_rows(rows, f"1 run x {args.fanout_events} events", fanout, args.rate)
    spread = await many_clients(tenant, relay, args.clients, args.clients, args.per_run_events, args.rate)
    load_rows(rows, f"{args.clients} runs x {args.per_run_events} events", spread, args.rate)

    step(f"4/4 POST /runs -> first event, {args.runs} runs (dev app in-process)")
    runs = await time_to_first_event(tenant, args.runs, warmup=3)
    rows = report.section(f"POST /chats/{{id}}/runs -> SSE, zero-latency scripted model ({args.runs} runs, in-process)")
    get_p50 = percentile(runs.get_run, 50)
    for name, samples in (
        ("POST answered 202", runs.post),
        ("first event (RUN_STARTED)", runs.first_event),
        ("first text (TEXT_MESSAGE_CONTENT)", runs.first_text),
        ("stream closed (RUN_FINISHED)", runs.finished),
        ("baseline: GET /runs/{id} round trip", runs.get_run),
    ):
        text = latency_row(samples)
        if samples is not runs.get_run:
            text += f"   p50 {percentile(samples, 50) / get_p50:.1f}x a GET"
        rows.append((name, text))
    if runs.cold_first_event is not None:
        rows.append(("first run of the process (cold)", f"first event after {ms(runs.cold_first_event)}"))


async def measure_all(args: argparse.Namespace, tenant: Tenant, relay: RelayProcess, report: Report) -> None:
    from personal_agent.bus import reset_bus

    try:
        await measure(args, tenant, relay, report)
    finally:
        await reset_bus()


def step(message: str) -> None:
    print(f"- {message}", flush=True)


def main() -> None:
    args = parse_args()
    # A plain SIGTERM would skip the `finally` blocks and leave Postgres, Valkey and the relay running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 8192:  # 500 clients: sockets here, in the relay and to Valkey
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(8192, hard), hard))
    began, load_before = time.perf_counter(), os.getloadavg()[0]
    report, timings = Report(), "-"
    try:
        with tempfile.TemporaryDirectory(prefix="pa-bench-") as tmp:
            step("starting the embedded Postgres and Valkey")
            with local_stack(Path(tmp)) as stack:
                timings = ", ".join(f"{k} {v:.1f}s" for k, v in stack.timings.items())
                tenant = make_tenant()
                log_path = args.relay_log or Path(tmp) / "relay.log"
                relay = RelayProcess(args.relay_app, log_path, args.relay_redis_options)
                try:
                    relay.wait_ready()
                    asyncio.run(measure_all(args, tenant, relay, report))
                finally:
                    relay.stop()
    finally:  # what was measured is printed even when a later part failed
        report.show(
            f"Streaming figures: loopback, embedded Valkey, {platform.python_implementation()}"
            f" {platform.python_version()}, {os.cpu_count()} CPUs, load average {load_before:.1f} ->"
            f" {os.getloadavg()[0]:.1f} (stack start: {timings}; whole run {time.perf_counter() - began:.0f} s)"
        )


if __name__ == "__main__":
    main()
