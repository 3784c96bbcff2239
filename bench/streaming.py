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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # `tests.live_server`, `functions.stream` and `bench.*` live beside `shared/`

from bench.raw_sse import RawSseClient  # noqa: E402
from bench.relay_process import HOST, RelayProcess  # noqa: E402
from bench.streaming_load import (  # noqa: E402
    load_rows,
    many_clients,
)
from bench.streaming_support import (  # noqa: E402
    MAXLEN,
    RETENTION_S,
    TERMINAL,
    Report,
    Tenant,
    insert_running_runs,
    latency_row,
    local_stack,
    make_tenant,
    ms,
    payload,
    percentile,
    sent_ns,
)

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
    from personal_agent.bus.key_names import run_stream

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
