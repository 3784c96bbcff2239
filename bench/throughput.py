"""Throughput of `pa dev` as a user runs it (issue 17), every figure from one run of this script:

- POST /chats/{id}/runs -> first SSE event, p50/p95 (runs one after another; the client opens the events URL
  when the POST answers), and POST /chats/{id}/runs/stream -> first event (the events in the POST's response);
- text events per second on one stream (a 2,000-chunk reply, first to last text event at the client; and the
  200-chunk reply);
- runs/s with 20 concurrent clients (20 users) x 5 runs each, started either way, read to RUN_FINISHED;
- server CPU ms per run in that phase: the `pa dev` process, and the Postgres + Valkey it started;
- SSE bytes per event (the frames on the wire: `id:` + `data:` + blank line);
- Last-Event-ID resume exactness: a client cut after a random number of events while the run streams,
  reconnecting with the last id it saw, must get exactly what an uncut client got.

The model is `bench/scripted_model.py` (the peer comparison's shape: a 200-token reply in 200 chunks, no delay).
Each variant is its own `pa dev` child process (`bench/scripted_dev.py`), all started at once and measured in
turns, phase by phase, so load from other work on the machine lands on each alike; ratios are to the first.

Re-run on a quiet machine (from the repo root; 2-4 minutes):

    .venv/bin/python bench/throughput.py
    .venv/bin/python bench/throughput.py --profile /tmp/profiles   # + py-spy top costs per variant (as root)

`--variant 'label:PA_X=1,PA_Y=2'` (repeatable) replaces the default variants. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.dev_process import HOST, DevProcess  # noqa: E402
from bench.profile_summary import summarize  # noqa: E402
from bench.raw_sse import RawSseClient, SseError  # noqa: E402
from bench.scripted_model import MODEL_ID  # noqa: E402
from bench.throughput_report import report  # noqa: E402

CLIENTS = 20
# Below uvicorn's 5 s keep-alive: a pooled connection is never reused just as the server closes it.
KEEPALIVE_S = 2.0
LIMITS = httpx.Limits(keepalive_expiry=KEEPALIVE_S)
# The levers of issue 17, off and on: "baseline" is the code before them.
DEFAULT_VARIANTS = [
    "baseline:PA_EVENT_BATCH_MS=0,PA_AUTH_CACHE_SECONDS=0,PA_FAST_LOOP=0,PA_SSE_FANOUT=0",
    "current:",
]
USERS = CLIENTS + 2  # one per concurrent client, one for the sequential phases, one for resume


@dataclass
class Server:
    dev: DevProcess
    tokens: list[str]
    figures: dict[str, Any] = field(default_factory=dict)
    streams_in_post: bool = True

    def auth(self, user: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}


@dataclass
class Streamed:
    ids: list[bytes | None]
    data: list[bytes]
    sizes: list[int]
    times: list[int]  # perf_counter_ns at arrival


async def read_all(client: RawSseClient, limit: int | None = None) -> Streamed:
    got = Streamed([], [], [], [])
    async for entry_id, data, size in client.events():
        got.times.append(time.perf_counter_ns())
        got.ids.append(entry_id)
        got.data.append(data)
        got.sizes.append(size)
        if limit is not None and len(got.data) >= limit:
            break
    return got


async def start_run(http: httpx.AsyncClient, server: Server, user: int, message: str) -> dict[str, Any]:
    chat = await http.post("/api/v1/chats", json={"title": "bench"}, headers=server.auth(user))
    chat.raise_for_status()
    return await post_run(http, server, user, chat.json()["id"], message)


async def post_run(http: httpx.AsyncClient, server: Server, user: int, chat_id: str, message: str) -> dict[str, Any]:
    body = {"message": message, "model": MODEL_ID, "mode": "inline"}
    started = await http.post(f"/api/v1/chats/{chat_id}/runs", json=body, headers=server.auth(user))
    started.raise_for_status()
    return dict(started.json())


async def stream_run(server: Server, user: int, chat_id: str, message: str) -> RawSseClient:
    """`POST /chats/{chat_id}/runs/stream`: the run started with its events in the response."""
    body = json.dumps({"message": message, "model": MODEL_ID, "mode": "inline"}).encode()
    path = f"/api/v1/chats/{chat_id}/runs/stream"
    return await RawSseClient.connect(HOST, server.dev.port, path, server.auth(user), body)


def text_events(got: Streamed) -> list[int]:
    return [i for i, data in enumerate(got.data) if b'"TEXT_MESSAGE_CONTENT"' in data]


async def latency_phase(server: Server, runs: int) -> None:
    """Runs one after another: POST -> first event, bytes per event, 200-chunk events/s."""
    first: list[int] = []
    first_one: list[int] = []
    sizes: list[int] = []
    rates: list[float] = []
    cpu = 0.0
    async with httpx.AsyncClient(base_url=server.dev.url, timeout=60, limits=LIMITS) as http:
        for _ in range(runs):
            chat = await http.post("/api/v1/chats", json={"title": "bench"}, headers=server.auth(0))
            chat.raise_for_status()
            cpu0 = server.dev.cpu_seconds()[0]
            t0 = time.perf_counter_ns()
            started = await post_run(http, server, 0, chat.json()["id"], "hello")
            sse = await RawSseClient.connect(HOST, server.dev.port, started["events_url"], server.auth(0))
            got = await read_all(sse)
            await sse.close()
            cpu += server.dev.cpu_seconds()[0] - cpu0
            first.append(got.times[0] - t0)
            # The same, started with its events in the POST's own response (one request), where the server has it.
            if server.streams_in_post:
                chat = await http.post("/api/v1/chats", json={"title": "bench"}, headers=server.auth(0))
                chat.raise_for_status()
                t0 = time.perf_counter_ns()
                try:
                    one = await stream_run(server, 0, chat.json()["id"], "hello")
                except SseError as exc:
                    if " answered 404" not in str(exc) and " answered 405" not in str(exc):
                        raise
                    server.streams_in_post = False  # a version before POST /chats/{id}/runs/stream
                else:
                    first_one.append((await read_all(one)).times[0] - t0)
                    await one.close()
            sizes += got.sizes
            text = text_events(got)
            rates.append((len(text) - 1) / ((got.times[text[-1]] - got.times[text[0]]) / 1e9))
    server.figures.setdefault("first_event", []).extend(first)
    if first_one:
        server.figures.setdefault("first_event_one", []).extend(first_one)
    server.figures.setdefault("sizes", []).extend(sizes)
    server.figures.setdefault("rate200", []).extend(rates)
    server.figures.setdefault("cpu_ms_alone", []).append(cpu * 1000 / runs)


async def long_stream_phase(server: Server, chunks: int) -> None:
    """One stream of `chunks` text events: events/s from the first to the last text event at the client."""
    async with httpx.AsyncClient(base_url=server.dev.url, timeout=60, limits=LIMITS) as http:
        started = await start_run(http, server, 0, f"chunks:{chunks}")
        sse = await RawSseClient.connect(HOST, server.dev.port, started["events_url"], server.auth(0))
        got = await read_all(sse)
        await sse.close()
    text = text_events(got)
    rate = (len(text) - 1) / ((got.times[text[-1]] - got.times[text[0]]) / 1e9)
    server.figures.setdefault("rate_long", []).append(rate)


async def load_phase(server: Server, per_client: int, profile: Path | None = None, *, one_request: bool) -> None:
    """CLIENTS users at once, each `per_client` runs in a row (its chats made first, untimed); each run a POST then
    a GET of its events, or (`one_request`) a POST answered with its events (skipped where the server has not)."""
    if one_request and not server.streams_in_post:
        return
    limits = httpx.Limits(max_connections=100, keepalive_expiry=KEEPALIVE_S)
    async with httpx.AsyncClient(base_url=server.dev.url, timeout=120, limits=limits) as http:

        async def chats(user: int) -> list[str]:
            out = []
            for _ in range(per_client):
                chat = await http.post("/api/v1/chats", json={"title": "bench"}, headers=server.auth(user))
                chat.raise_for_status()
                out.append(chat.json()["id"])
            return out

        made = await asyncio.gather(*(chats(c + 1) for c in range(CLIENTS)))

        async def client(user: int, chat_ids: list[str]) -> int:
            events = 0
            for chat_id in chat_ids:
                if one_request:
                    sse = await stream_run(server, user, chat_id, "hello")
                else:
                    started = await post_run(http, server, user, chat_id, "hello")
                    sse = await RawSseClient.connect(HOST, server.dev.port, started["events_url"], server.auth(user))
                got = await read_all(sse)
                await sse.close()
                if b'"RUN_FINISHED"' not in got.data[-1]:
                    raise RuntimeError(f"run in chat {chat_id} ended without RUN_FINISHED: {got.data[-1][:200]!r}")
                events += len(got.data)
            return events

        spy = server.dev.profile(profile) if profile else None
        cpu0 = server.dev.cpu_seconds()
        own0 = time.process_time()
        t0 = time.perf_counter()
        counts = await asyncio.gather(*(client(c + 1, made[c]) for c in range(CLIENTS)))
        wall = time.perf_counter() - t0
        cpu1 = server.dev.cpu_seconds()
        own = time.process_time() - own0
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
    runs = CLIENTS * per_client
    key = "_one" if one_request else ""
    server.figures.setdefault(f"runs_per_s{key}", []).append(runs / wall)
    server.figures.setdefault(f"cpu_ms{key}", []).append((cpu1[0] - cpu0[0]) * 1000 / runs)
    server.figures.setdefault(f"stack_cpu_ms{key}", []).append((cpu1[1] - cpu0[1]) * 1000 / runs)
    server.figures.setdefault(f"client_cpu_ms{key}", []).append(own * 1000 / runs)
    server.figures.setdefault("events_per_run", []).append(sum(counts) / runs)


async def resume_phase(server: Server, runs: int, rng: random.Random) -> None:
    """A full reader and a reader cut at a random event (while the run streams) then resumed by Last-Event-ID."""
    exact = 0
    user = CLIENTS + 1
    async with httpx.AsyncClient(base_url=server.dev.url, timeout=60, limits=LIMITS) as http:
        for _ in range(runs):
            started = await start_run(http, server, user, "hello")
            path, auth = started["events_url"], server.auth(user)
            full_client = await RawSseClient.connect(HOST, server.dev.port, path, auth)
            cut_client = await RawSseClient.connect(HOST, server.dev.port, path, auth)
            cut_at = rng.randint(1, 200)
            full, head = await asyncio.gather(read_all(full_client), read_all(cut_client, cut_at))
            await cut_client.close()
            await full_client.close()
            last = head.ids[-1]
            assert last is not None
            resumed = await RawSseClient.connect(HOST, server.dev.port, path, {**auth, "Last-Event-ID": last.decode()})
            tail = await read_all(resumed)
            await resumed.close()
            if head.ids + tail.ids == full.ids and head.data + tail.data == full.data:
                exact += 1
    server.figures["resume"] = (exact, runs)


def parse_args() -> argparse.Namespace:
    class Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
        pass

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=Formatter)
    parser.add_argument("--variant", action="append", help="label:ENV=V,ENV=V (default: baseline and current)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of every phase, variants taking turns")
    parser.add_argument("--runs", type=int, default=15, help="sequential runs per round (latency, bytes)")
    parser.add_argument("--per-client", type=int, default=5, help=f"runs per client in the {CLIENTS}-client phase")
    parser.add_argument("--resume-runs", type=int, default=15, help="cut-and-resume runs per round")
    parser.add_argument("--long-chunks", type=int, default=2000, help="reply length for one-stream events/s")
    parser.add_argument("--profile", type=Path, help="directory for py-spy profiles of the load phase")
    parser.add_argument("--seed", type=int, default=17)
    return parser.parse_args()


async def measure(args: argparse.Namespace, servers: list[Server]) -> None:
    rng = random.Random(args.seed)
    for round_no in range(args.rounds):
        order = servers if round_no % 2 == 0 else servers[::-1]
        for s in order:
            print(f"- round {round_no + 1}: {s.dev.label}", flush=True)
            await latency_phase(s, args.runs)
            await long_stream_phase(s, args.long_chunks)
            await load_phase(s, args.per_client, one_request=False)
            await load_phase(s, args.per_client, one_request=True)
            await resume_phase(s, args.resume_runs, rng)
            exact, total = s.figures["resume"]
            before = s.figures.get("resume_all", (0, 0))
            s.figures["resume_all"] = (before[0] + exact, before[1] + total)
    for s in servers:
        s.figures["resume"] = tuple(s.figures["resume_all"])
    if args.profile:  # an extra load phase under py-spy; its figures are dropped (sampling costs the server CPU)
        args.profile.mkdir(parents=True, exist_ok=True)
        for s in servers:
            print(f"- profiling: {s.dev.label}", flush=True)
            kept = {k: list(v) for k, v in s.figures.items() if isinstance(v, list)}
            spied = args.profile / f"{s.dev.label}.txt"
            await load_phase(s, args.per_client, spied, one_request=s.streams_in_post)
            s.figures.update(kept)


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    load0 = os.getloadavg()[0]
    variants = args.variant or DEFAULT_VARIANTS
    servers: list[Server] = []
    with tempfile.TemporaryDirectory(prefix="pa-throughput-") as tmp:
        try:
            for spec in variants:
                label, _, pairs = spec.partition(":")
                env = dict(p.split("=", 1) for p in pairs.split(",") if p)
                dev = DevProcess(label, Path(tmp) / label, env)
                servers.append(Server(dev, []))
            print(f"- starting {len(servers)} pa dev processes", flush=True)
            for s in servers:
                s.dev.wait_ready()
                s.tokens = s.dev.tokens(USERS)
            try:
                asyncio.run(measure(args, servers))
            except BaseException:
                for s in servers:  # the servers' own account of what went wrong, before their folder goes
                    print(f"\n--- {s.dev.label}: last lines of its log ---\n" + s.dev.log_path.read_text()[-3000:])
                raise
            report(servers, started, (load0, os.getloadavg()[0]), CLIENTS)
            if args.profile:
                for s in servers:
                    print(f"\npy-spy, {s.dev.label}, load phase: top costs (% of samples)")
                    print(summarize(args.profile / f"{s.dev.label}.txt"))
        finally:
            for s in servers:
                s.dev.stop()


if __name__ == "__main__":
    main()
