"""Cold start of the API function: import-and-init of its handler vs a bare `import fastapi`.

The handler imports each router with its first request (`personal_agent.fastpaths.lazy_routers`); what that request
then pays is printed too: the chat routers (a chat's first turn) and every router (a 404 on a cold container).

Each figure is the median of N fresh interpreters, measured in the same run, the two statements taking turns
(one of each per round) so load from other work on the machine lands on both alike. Target ratio <= 1.5.

`--tree DIR` also times the handler from another copy of `shared/` and `functions/` (e.g. the last commit's:
`mkdir /tmp/before && git archive HEAD shared functions | tar -x -C /tmp/before`), in the same rounds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 15

CHAT_GROUPS = ("chats", "runs", "attachments")
LOAD = (
    "from personal_agent.api.router_groups import GROUPS; "
    "[m.app.state.lazy_routers.load(g) for g in GROUPS if g.module in {groups!r}]"
)
TIMED = "import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"


def sample(stmt: str, tree: str | None = None) -> float:
    """Seconds one fresh interpreter spends on `stmt` (importing `personal_agent` from `tree`'s copy if given)."""
    path = f"{tree}/shared:{tree}" if tree else str(ROOT)
    out = subprocess.run(
        [sys.executable, "-c", TIMED.format(stmt=stmt)],
        cwd=tree or ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PA_ENV": "aws", "PYTHONPATH": path},
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", help="another copy of the repo's shared/ to time in the same rounds")
    args = parser.parse_args()
    sample("import functions.api.app")  # warm the bytecode caches once
    if args.tree:
        sample("import functions.api.app", args.tree)
    baseline: list[float] = []
    handler: list[float] = []
    other: list[float] = []
    first_turn: list[float] = []
    everything: list[float] = []
    ratios: list[float] = []
    for _ in range(RUNS):
        baseline.append(sample("import fastapi"))
        handler.append(sample("import functions.api.app"))
        ratios.append(handler[-1] / baseline[-1])
        first_turn.append(sample(f"import functions.api.app as m; {LOAD.format(groups=CHAT_GROUPS)}"))
        everything.append(sample("import functions.api.app as m; m.app.state.lazy_routers.load_all()"))
        if args.tree:
            other.append(sample("import functions.api.app", args.tree))
    fastapi_ms, handler_ms = statistics.median(baseline) * 1000, statistics.median(handler) * 1000
    print(f"bare `import fastapi`          median {fastapi_ms:7.1f} ms  ({RUNS} runs)")
    print(f"API handler import + init      median {handler_ms:7.1f} ms  ({RUNS} runs)")
    print(f"ratio of the medians           {handler_ms / fastapi_ms:.2f}  (target <= 1.5)")
    print(f"median of per-round ratios     {statistics.median(ratios):.2f}")
    for label, samples in (("+ the chat routers", first_turn), ("+ every router", everything)):
        ms = statistics.median(samples) * 1000
        print(f"{label:<30} median {ms:7.1f} ms  ratio {ms / fastapi_ms:.2f}")
    if other:
        other_ms = statistics.median(other) * 1000
        print(f"handler from {args.tree}: median {other_ms:7.1f} ms, ratio {other_ms / fastapi_ms:.2f}")


if __name__ == "__main__":
    main()
