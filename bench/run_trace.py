"""What building a run's trace costs (`lifecycle/run_trace._requests`: one pass over the run's history), for runs of
growing length: a history of earlier chat turns, then `requests` model requests each with a tool call and a 2 kB
tool result. Printed, never asserted:

    .venv/bin/python bench/run_trace.py [--requests 5 25 100] [--prior 200]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from personal_agent.lifecycle.run_trace import _requests

PASSAGE = "lorem ipsum dolor sit amet " * 80


def history(prior: int, requests: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for i in range(prior):
        turns.append({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": f"question {i}"}]})
        turns.append({"kind": "response", "parts": [{"part_kind": "text", "content": f"answer {i} " * 20}]})
    turns.append(
        {"kind": "request", "instructions": "Be brief.", "parts": [{"part_kind": "user-prompt", "content": "go"}]}
    )
    for i in range(requests):
        call = {"part_kind": "tool-call", "tool_name": "search_knowledge", "args": {"query": f"q{i}"}}
        turns.append({"kind": "response", "parts": [call]})
        result = {"part_kind": "tool-return", "tool_name": "search_knowledge", "content": PASSAGE}
        turns.append({"kind": "request", "instructions": "Be brief.", "parts": [result]})
    turns.append({"kind": "response", "parts": [{"part_kind": "text", "content": "done"}]})
    return turns


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, nargs="+", default=[5, 25, 100])
    parser.add_argument("--prior", type=int, default=200, help="earlier chat turns before the run")
    args = parser.parse_args()
    print(f"{'requests':>8} {'messages':>9} {'median ms':>10}")
    for count in args.requests:
        messages = history(args.prior, count)
        start = args.prior * 2
        times = []
        for _ in range(20):
            began = time.perf_counter()
            _requests(messages, start, {"instructions": "Be brief."}, [], 100_000)
            times.append((time.perf_counter() - began) * 1000)
        print(f"{count + 1:>8} {len(messages):>9} {statistics.median(times):>10.2f}")


if __name__ == "__main__":
    main()
