"""`/v1/chat/completions` streaming overhead against the same turn on `POST /api/v1/chats/{id}/runs/stream`
(issue 32): `pa dev` with the bench's scripted model (a 200-token reply streamed as 200 chunks, no delay, no
network) in a child process, each request driven by one HTTP client here, alternating the two routes turn by turn
so both see the same machine state. Printed per route: time to the first text (POST -> first content chunk / first
TEXT_MESSAGE_CONTENT), time to the end, and text events per second, p50 and p95; then the ratio.

Run from the repo root: `.venv/bin/python bench/openai_overhead.py [--turns 40]`. Figures are printed, never
asserted."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.dev_process import DevProcess  # noqa: E402
from bench.scripted_model import MODEL_ID  # noqa: E402

Sample = tuple[float, float, int]  # seconds to the first text, seconds to the end, text events


def _v1_turn(http: httpx.Client, headers: dict[str, str]) -> Sample:
    body = {"model": MODEL_ID, "messages": [{"role": "user", "content": "hello"}], "stream": True}
    start = time.perf_counter()
    first, events = 0.0, 0
    with http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as stream:
        assert stream.status_code == 200, stream.read()
        for line in stream.iter_lines():
            if line.startswith("data: {"):
                chunk = json.loads(line[6:])
                if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                    events += 1
                    first = first or time.perf_counter() - start
    return first, time.perf_counter() - start, events


def _native_turn(http: httpx.Client, headers: dict[str, str]) -> Sample:
    chat = http.post("/api/v1/chats", json={}, headers=headers).json()["id"]
    start = time.perf_counter()
    first, events = 0.0, 0
    body = {"message": "hello", "model": MODEL_ID}
    with http.stream("POST", f"/api/v1/chats/{chat}/runs/stream", json=body, headers=headers) as stream:
        assert stream.status_code == 200, stream.read()
        for line in stream.iter_lines():
            if line.startswith("data:") and '"TEXT_MESSAGE_CONTENT"' in line:
                events += 1
                first = first or time.perf_counter() - start
    return first, time.perf_counter() - start, events


def _row(name: str, samples: list[Sample]) -> tuple[float, float]:
    firsts = sorted(s[0] * 1000 for s in samples)
    totals = sorted(s[1] * 1000 for s in samples)
    rates = sorted(s[2] / s[1] for s in samples)
    p95 = max(0, int(len(samples) * 0.95) - 1)
    print(
        f"{name:<34} first text p50 {statistics.median(firsts):7.1f} ms  p95 {firsts[p95]:7.1f} ms   "
        f"end p50 {statistics.median(totals):7.1f} ms   text events/s p50 {statistics.median(rates):7.0f}"
    )
    return statistics.median(firsts), statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40, help="turns per route (after 3 warm-up turns each)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pa-bench-v1-") as tmp:
        dev = DevProcess("v1", Path(tmp) / "data", {})
        try:
            dev.wait_ready()
            headers = {"Authorization": f"Bearer {dev.tokens(1)[0]}"}
            v1: list[Sample] = []
            native: list[Sample] = []
            with httpx.Client(base_url=dev.url, timeout=120) as http:
                for turn in range(args.turns + 3):
                    a, b = _v1_turn(http, headers), _native_turn(http, headers)
                    if turn >= 3:
                        v1.append(a)
                        native.append(b)
            print(f"{args.turns} turns per route, the scripted model's 200-chunk reply, pa dev on loopback")
            first_native, rate_native = _row("POST /api/v1/chats/{id}/runs/stream", native)
            first_v1, rate_v1 = _row("POST /v1/chat/completions (stream)", v1)
            print(
                f"/v1 against the native route: first text {first_v1 - first_native:+.1f} ms "
                f"(x{first_v1 / first_native:.2f}), text events/s x{rate_v1 / rate_native:.2f}"
            )
        finally:
            dev.stop()


if __name__ == "__main__":
    main()
