"""Sub-agent cost on `pa dev` with the offline demo model, printed (never asserted).

For each driver (inline, durable) it times, end to end over HTTP (POST the turn, follow its stream to the end):

- baseline: `/tool current_time {}` — one tool round, no sub-agent;
- one sub-agent: `/tool delegate {"task": "what time is it?", "preset": "explore"}` — the parent's tool round
  starts a child run that itself calls `current_time` and answers.

It prints the medians and the ratio to the baseline measured in the same run (state transitions per child are
counted in docs/subagents.md). Usage: `.venv/bin/python bench/subagents.py [runs]`.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tests.e2e.web_chat_stack`

from tests.e2e.web_chat_stack import DevStack, dev_stack  # noqa: E402

BASELINE = "/tool current_time {}"
DELEGATE = '/tool delegate {"task": "what time is it?", "preset": "explore"}'


def turn(api: httpx.Client, message: str, mode: str) -> tuple[float, dict[str, Any]]:
    chat = api.post("/api/v1/chats", json={"title": "bench"}).json()
    start = time.perf_counter()
    started = api.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": message, "mode": mode})
    started.raise_for_status()
    with api.stream("GET", started.json()["events_url"]) as stream:
        last = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")][-1]
    elapsed = time.perf_counter() - start
    assert last["type"] == "RUN_FINISHED", last
    return elapsed, api.get(started.json()["status_url"]).json()


def measure(stack: DevStack, runs: int) -> None:
    with httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {stack.token()}"}, timeout=120) as api:
        for mode in ("inline", "durable"):
            turn(api, BASELINE, mode)  # warm
            base = [turn(api, BASELINE, mode)[0] for _ in range(runs)]
            tree = [turn(api, DELEGATE, mode) for _ in range(runs)]
            times = [t for t, _ in tree]
            children = {len(run["children"]) for _, run in tree}
            b, d = statistics.median(base), statistics.median(times)
            print(
                f"{mode:8} baseline {b * 1000:8.0f} ms   one sub-agent {d * 1000:8.0f} ms   "
                f"ratio {d / b:5.2f}   children per run {sorted(children)}"
            )


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with (
        tempfile.TemporaryDirectory(prefix="pa-bench-subagents-") as tmp,
        dev_stack(Path(tmp) / "data", PA_DEMO_DELAY_MS="0") as stack,
    ):
        print(f"sub-agents on pa dev (offline demo model), median of {runs} runs")
        measure(stack, runs)


if __name__ == "__main__":
    main()
