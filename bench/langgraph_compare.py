"""`pa dev` against LangGraph's Agent Server in the same run on this machine (issue 35, item 5: runs/s at 20 clients
>= 3x LangGraph's, server CPU per run <= 15 ms). Printed, never asserted.

Both servers run the same turn with a scripted model and no network: `bench/scripted_model.py` in `pa dev`
(`bench/scripted_dev.py`), and the same shape in a LangGraph agent (`bench/langgraph_peer/graph.py`: a model node and
a `ToolNode` with `current_time`) served by `langgraph dev --no-reload` (LangGraph's in-memory Agent Server,
`langgraph-cli[inmem]`), which needs a venv of its own, never this project's:

    python3.11 -m venv /tmp/lg-venv && /tmp/lg-venv/bin/pip install 'langgraph-cli[inmem]'
    .venv/bin/python bench/langgraph_compare.py --langgraph-venv /tmp/lg-venv

Turns: `plain` (a 200-token reply as 200 chunks, one model request: `bench/throughput.py`'s load phase) and `tools3`
(3 `current_time` calls, one model request each, then the reply: `bench/economics.py`'s turn). Each run is one
request answered with its events: `POST /api/v1/chats/{id}/runs/stream` (AG-UI events) and LangGraph's
`POST /threads/{id}/runs/stream` (`stream_mode=messages-tuple`: one event per token), read to the end; chats and
threads are made first, untimed. CLIENTS clients at once, `--per-client` runs each; the servers take turns phase by
phase (order reversed each round), so load from other work on the machine lands on both alike. Server CPU per run is
the server's process tree (for `pa dev`: the server, then its Postgres + Valkey apart; LangGraph's in-memory server
keeps runs, threads and checkpoints in its own memory, with no database).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import psutil  # noqa: E402

from bench.dev_process import HOST, DevProcess  # noqa: E402
from bench.raw_sse import RawSseClient  # noqa: E402
from bench.scripted_model import MODEL_ID  # noqa: E402

CLIENTS = 20
TURNS = {"plain": "hello", "tools3": "tools:3 what time is it?"}


class CrlfSseClient(RawSseClient):
    """LangGraph's server ends SSE lines with CRLF; the raw client splits frames on LF LF."""

    async def _read_more(self) -> bool:
        more = await super()._read_more()
        self._buffer = self._buffer.replace(b"\r\n", b"\n")
        return more


class LangGraphServer:
    """`langgraph dev` in the peer's venv, serving `bench/langgraph_peer` from a copy under `work` (it writes its
    in-memory state there), `jobs` runs at once (its default is 10; the clients are 20)."""

    def __init__(self, venv: Path, work: Path, jobs: int) -> None:
        from personal_agent.local.ports import free_port

        self.port = free_port()
        self.label = "langgraph"
        app = work / "langgraph_peer"
        shutil.copytree(ROOT / "bench" / "langgraph_peer", app)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PA_", "VIRTUAL_ENV", "PYTHON"))}
        env |= {"LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LOG_LEVEL": "WARNING"}
        command = [str(venv / "bin" / "langgraph"), "dev", "--no-browser", "--no-reload", "--host", HOST]
        command += ["--port", str(self.port), "--n-jobs-per-worker", str(jobs), "--server-log-level", "WARNING"]
        self.log_path = work / "langgraph.log"
        self.proc = subprocess.Popen(command, cwd=app, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        with self.log_path.open("wb") as log:
            for line in self.proc.stdout:
                log.write(line)

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(f"http://{HOST}:{self.port}/ok", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"langgraph dev did not start:\n{self.log_path.read_text()[-3000:]}")

    def cpu_seconds(self) -> tuple[float, float]:
        me = psutil.Process(self.proc.pid)
        total = sum(me.cpu_times()[:2])
        for child in me.children(recursive=True):
            try:
                total += sum(child.cpu_times()[:2])
            except psutil.Error:
                pass
        return total, 0.0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


async def _pa_runs(
    dev: DevProcess, tokens: list[str], message: str, per_client: int
) -> Callable[[int], Awaitable[int]]:
    """Chats made (untimed); the returned coroutine runs client `c`'s turns and answers the events it read."""
    auth = [{"Authorization": f"Bearer {t}"} for t in tokens]
    async with httpx.AsyncClient(base_url=dev.url, timeout=60) as http:

        async def chats(c: int) -> list[str]:
            made = [
                await http.post("/api/v1/chats", json={"title": "bench"}, headers=auth[c]) for _ in range(per_client)
            ]
            return [r.raise_for_status().json()["id"] for r in made]

        chat_ids = await asyncio.gather(*(chats(c) for c in range(CLIENTS)))
    body = json.dumps({"message": message, "model": MODEL_ID, "mode": "inline"}).encode()

    async def client(c: int) -> int:
        events = 0
        for chat_id in chat_ids[c]:
            sse = await RawSseClient.connect(HOST, dev.port, f"/api/v1/chats/{chat_id}/runs/stream", auth[c], body)
            frames = [data async for data in sse.frames()]
            await sse.close()
            if b'"RUN_FINISHED"' not in frames[-1]:
                raise RuntimeError(f"pa dev: a run ended without RUN_FINISHED: {frames[-1][:200]!r}")
            events += len(frames)
        return events

    return client


async def _lg_runs(server: LangGraphServer, message: str, per_client: int) -> Callable[[int], Awaitable[int]]:
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{server.port}", timeout=60) as http:

        async def threads(c: int) -> list[str]:
            made = [await http.post("/threads", json={}) for _ in range(per_client)]
            return [r.raise_for_status().json()["thread_id"] for r in made]

        thread_ids = await asyncio.gather(*(threads(c) for c in range(CLIENTS)))
    body = json.dumps(
        {"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": message}]}}
        | {"stream_mode": ["messages-tuple"]}
    ).encode()

    async def client(c: int) -> int:
        events = 0
        for thread_id in thread_ids[c]:
            sse = await CrlfSseClient.connect(HOST, server.port, f"/threads/{thread_id}/runs/stream", {}, body)
            frames = [data async for data in sse.frames()]
            await sse.close()
            texts = sum(1 for f in frames if b'"AIMessageChunk"' in f)
            if texts < 200 or any(f.startswith(b'{"error"') for f in frames):
                raise RuntimeError(f"langgraph: a run streamed {texts} chunks; last: {frames[-1][:300]!r}")
            events += len(frames)
        return events

    return client


async def load(
    server: DevProcess | LangGraphServer, prepared: Callable[[int], Awaitable[int]], runs: int
) -> dict[str, float]:
    cpu0 = server.cpu_seconds()
    t0 = time.perf_counter()
    counts = await asyncio.gather(*(prepared(c) for c in range(CLIENTS)))
    wall = time.perf_counter() - t0
    cpu1 = server.cpu_seconds()
    return {
        "runs_per_s": runs / wall,
        "cpu_ms": (cpu1[0] - cpu0[0]) * 1000 / runs,
        "stack_cpu_ms": (cpu1[1] - cpu0[1]) * 1000 / runs,
        "events": sum(counts) / runs,
    }


async def measure(
    pa: DevProcess, tokens: list[str], lg: LangGraphServer, args: argparse.Namespace
) -> dict[str, dict[str, list[dict[str, float]]]]:
    figures: dict[str, dict[str, list[dict[str, float]]]] = {t: {"pa": [], "langgraph": []} for t in args.turn}
    runs = CLIENTS * args.per_client
    # Warm-up, untimed: one run alone first (a fresh org's first runs at once race to create its default agent: 409
    # slug_taken), then one run per client each way, so neither pays first-request imports in the timed phases.
    await (await _pa_runs(pa, tokens, TURNS["plain"], 1))(0)
    await (await _lg_runs(lg, TURNS["plain"], 1))(0)
    for turn in args.turn:
        await load(pa, await _pa_runs(pa, tokens, TURNS[turn], 1), CLIENTS)
        await load(lg, await _lg_runs(lg, TURNS[turn], 1), CLIENTS)
    for round_no in range(args.rounds):
        for turn in args.turn:
            order = ["pa", "langgraph"] if round_no % 2 == 0 else ["langgraph", "pa"]
            for who in order:
                print(f"- round {round_no + 1}, {turn}: {who}", flush=True)
                if who == "pa":
                    prepared = await _pa_runs(pa, tokens, TURNS[turn], args.per_client)
                    figures[turn]["pa"].append(await load(pa, prepared, runs))
                else:
                    prepared = await _lg_runs(lg, TURNS[turn], args.per_client)
                    figures[turn]["langgraph"].append(await load(lg, prepared, runs))
    return figures


def report(
    figures: dict[str, dict[str, list[dict[str, float]]]], args: argparse.Namespace, load_avg: tuple[float, float]
) -> None:
    print(
        f"\n{CLIENTS} clients x {args.per_client} runs, {args.rounds} rounds;"
        f" load {load_avg[0]:.1f} -> {load_avg[1]:.1f}"
    )
    print("(medians of the rounds; ratio = pa dev / LangGraph for runs/s, LangGraph / pa dev for CPU)")
    head = f"{'turn':<8} {'server':<10} {'runs/s':>8} {'CPU ms/run':>11} {'+PG/Valkey':>11} {'events/run':>11}"
    print(head)
    summary: dict[str, dict[str, float]] = {}
    for turn, by in figures.items():
        med = {who: {k: statistics.median(r[k] for r in rows) for k in rows[0]} for who, rows in by.items()}
        for who, m in med.items():
            print(
                f"{turn:<8} {who:<10} {m['runs_per_s']:>8.1f} {m['cpu_ms']:>11.1f} {m['stack_cpu_ms']:>11.1f}"
                f" {m['events']:>11.0f}"
            )
        ratio = med["pa"]["runs_per_s"] / med["langgraph"]["runs_per_s"]
        cpu_ratio = med["langgraph"]["cpu_ms"] / (med["pa"]["cpu_ms"] + med["pa"]["stack_cpu_ms"])
        print(f"{turn:<8} {'ratio':<10} {ratio:>7.2f}x {cpu_ratio:>10.2f}x  (target: runs/s >= 3x; pa CPU <= 15 ms)")
        summary[turn] = {"runs_ratio": round(ratio, 2), "pa_cpu_ms": round(med["pa"]["cpu_ms"], 1)}
        summary[turn] |= {"langgraph_cpu_ms": round(med["langgraph"]["cpu_ms"], 1)}
    print(json.dumps(summary))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langgraph-venv", type=Path, default=Path("/tmp/lg-venv"), help="venv with langgraph-cli[inmem]")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--per-client", type=int, default=5)
    p.add_argument("--turn", action="append", choices=sorted(TURNS), help="default: both")
    args = p.parse_args()
    args.turn = args.turn or ["plain", "tools3"]
    if not (args.langgraph_venv / "bin" / "langgraph").exists():
        sys.exit(f"no langgraph in {args.langgraph_venv}: see this script's docstring")
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="pa-vs-langgraph-") as tmp:
        pa = DevProcess("pa", Path(tmp) / "pa", {})
        lg = LangGraphServer(args.langgraph_venv, Path(tmp), CLIENTS)
        try:
            pa.wait_ready()
            lg.wait_ready()
            tokens = pa.tokens(CLIENTS)
            figures = asyncio.run(measure(pa, tokens, lg, args))
            report(figures, args, (load0, os.getloadavg()[0]))
        finally:
            pa.stop()
            lg.stop()


if __name__ == "__main__":
    main()
