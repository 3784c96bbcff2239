"""The platform's overhead over a real provider's first token (issue 35, item 6), printed, not asserted.

An OpenAI-compatible server on loopback (here, in a thread of this process) waits `--wait-ms` before the first
token of each streamed answer, then streams `--chunks` chunks. `pa dev` (a child process, `bench/dev_process.py`)
has it as its platform model (`PA_OPENAI_COMPATIBLE_BASE_URL`, model `openai-compatible:default`), exactly as an
operator points it at a local vLLM or Ollama. For each way of starting a run, one after another, alternating:

- inline: `POST /api/v1/chats/{id}/runs` then `GET` its events URL (what the web chat does);
- durable: the same with `"mode": "durable"` (the state machine on moto);
- stream: `POST /api/v1/chats/{id}/runs/stream` (the events in the POST's response);

it prints POST -> first TEXT_MESSAGE_CONTENT at the client minus the provider's wait, p50/p99, and where that goes:
POST -> the provider receiving the model request ("before the model") and the provider's first chunk sent -> the
client seeing it ("after the model"). Target: <= 5 ms p50 inline.

Run from the repo root: `.venv/bin/python bench/first_token.py [--turns 40] [--wait-ms 300]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.dev_process import DevProcess  # noqa: E402

MODEL = "openai-compatible:default"
MODES = ("inline", "durable", "stream")


class SlowProvider:
    """Chat Completions, streamed: waits, then `chunks` one-word chunks; notes when each request arrived and when
    its first chunk went out (perf_counter, the same clock as the client's: one process)."""

    def __init__(self, wait_s: float, chunks: int) -> None:
        from starlette.applications import Starlette
        from starlette.routing import Route

        from tests.live_server import LiveServer

        self.wait_s, self.chunks = wait_s, chunks
        self.arrived: list[float] = []
        self.first_sent: list[float] = []
        self.lock = threading.Lock()
        self.server = LiveServer(Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])]))

    async def _chat(self, request: Any) -> Any:
        from starlette.responses import StreamingResponse

        arrived = time.perf_counter()
        body = await request.json()
        with self.lock:
            self.arrived.append(arrived)

        async def frames() -> AsyncIterator[str]:
            await asyncio.sleep(self.wait_s)
            for i in range(self.chunks):
                delta = {"role": "assistant", "content": f"w{i} "} if i == 0 else {"content": f"w{i} "}
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
                chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
                if i == 0:
                    with self.lock:
                        self.first_sent.append(time.perf_counter())
                yield f"data: {json.dumps(chunk)}\n\n"
            usage = {"prompt_tokens": 20, "completion_tokens": self.chunks, "total_tokens": 20 + self.chunks}
            end = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"], "usage": usage}
            end["choices"] = [{"index": 0, "delta": {}, "finish_reason": "stop"}]
            yield f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")


def _first_text(lines: Any) -> float:
    for line in lines:
        if line.startswith("data:") and '"TEXT_MESSAGE_CONTENT"' in line:
            return time.perf_counter()
    raise RuntimeError("the stream ended without text")


def _drain(lines: Any) -> None:
    for _ in lines:
        pass


def turn(http: httpx.Client, headers: dict[str, str], mode: str) -> tuple[float, float]:
    """(POST started, first text event seen) of one turn in a new chat."""
    chat = http.post("/api/v1/chats", json={}, headers=headers).json()["id"]
    body: dict[str, Any] = {"message": "hello", "model": MODEL}
    if mode == "stream":
        start = time.perf_counter()
        with http.stream("POST", f"/api/v1/chats/{chat}/runs/stream", json=body, headers=headers) as response:
            assert response.status_code == 200, response.read()
            lines = response.iter_lines()
            seen = _first_text(lines)
            _drain(lines)
        return start, seen
    body["mode"] = mode
    start = time.perf_counter()
    started = http.post(f"/api/v1/chats/{chat}/runs", json=body, headers=headers)
    assert started.status_code in (200, 201, 202), started.text
    with http.stream("GET", started.json()["events_url"], headers=headers) as response:
        lines = response.iter_lines()
        seen = _first_text(lines)
        _drain(lines)
    return start, seen


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40, help="turns per way (after 2 warm-up turns each)")
    parser.add_argument("--wait-ms", type=float, default=300.0, help="the provider's wait before its first token")
    parser.add_argument("--chunks", type=int, default=20)
    args = parser.parse_args()
    provider = SlowProvider(args.wait_ms / 1000, args.chunks)
    provider.server.start()
    figures: dict[str, list[tuple[float, float, float]]] = {m: [] for m in MODES}
    try:
        with tempfile.TemporaryDirectory(prefix="pa-bench-first-token-") as tmp:
            env = {"PA_OPENAI_COMPATIBLE_BASE_URL": f"{provider.server.url}/v1", "PA_OPENAI_COMPATIBLE_MODEL": "m"}
            dev = DevProcess("first-token", Path(tmp) / "data", env)
            try:
                dev.wait_ready()
                headers = {"Authorization": f"Bearer {dev.tokens(1)[0]}"}
                with httpx.Client(base_url=dev.url, timeout=120) as http:
                    for n in range(args.turns + 2):
                        for mode in MODES:
                            before = len(provider.arrived)
                            start, seen = turn(http, headers, mode)
                            arrived, first = provider.arrived[before], provider.first_sent[before]
                            overhead = seen - start - args.wait_ms / 1000
                            if n >= 2:
                                figures[mode].append((overhead, arrived - start, seen - first))
            finally:
                dev.stop()
    finally:
        provider.server.stop()
    report(args, figures)


def report(args: argparse.Namespace, figures: dict[str, list[tuple[float, float, float]]]) -> None:
    import os

    print(
        f"\nOverhead over the provider's first token: {args.turns} turns per way, provider waits {args.wait_ms:.0f} ms"
        f" then streams {args.chunks} chunks; pa dev on loopback, load {os.getloadavg()[0]:.1f}"
    )
    for mode in MODES:
        overhead = [f[0] * 1000 for f in figures[mode]]
        before = [f[1] * 1000 for f in figures[mode]]
        after = [f[2] * 1000 for f in figures[mode]]
        print(
            f"  {mode:<8} POST -> first text - wait: p50 {statistics.median(overhead):7.1f} ms  p99"
            f" {_pct(overhead, 0.99):7.1f} ms | before the model p50 {statistics.median(before):6.1f} ms,"
            f" after its first chunk p50 {statistics.median(after):6.1f} ms"
        )
    inline = statistics.median(f[0] * 1000 for f in figures["inline"])
    print(f"  target <= 5 ms p50 inline: {'met' if inline <= 5 else 'missed'} ({inline:.1f} ms)")
    summary = {m: round(statistics.median(f[0] * 1000 for f in figures[m]), 1) for m in MODES}
    print(json.dumps({"first_token_overhead_ms_p50": summary}))


if __name__ == "__main__":
    main()
