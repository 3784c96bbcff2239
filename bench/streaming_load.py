"""Streaming benchmark, part 3: many SSE clients on one relay process (events/s, RSS, CPU per frame)."""

from __future__ import annotations

import asyncio
import os
import resource
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.raw_sse import RawSseClient
from bench.relay_process import HOST, RelayProcess
from bench.streaming_support import (
    MAXLEN,
    TERMINAL,
    Tenant,
    insert_running_runs,
    latency_row,
    payload,
    sent_ns,
)

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
    from personal_agent.bus.key_names import run_stream

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
