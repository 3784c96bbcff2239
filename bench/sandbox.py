"""What the local code sandbox (`sandbox/bubblewrap.py`) costs: starting a session (bwrap, namespaces, the kernel),
a trivial call, the first pandas + matplotlib import in a session, a chart saved and returned, and closing it.
Medians over `--sessions` sessions, in this process. Printed, never asserted:

    .venv/bin/python bench/sandbox.py [--sessions 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from personal_agent.sandbox.bubblewrap import BubblewrapBackend, probe
from personal_agent.sandbox.config import SandboxLimits

CHART = (
    "import pandas as pd\nimport matplotlib.pyplot as plt\n"
    "pd.DataFrame({'x': range(12), 'y': range(12)}).plot(x='x', y='y')\nplt.savefig('c.png')"
)


async def _one(backend: BubblewrapBackend) -> dict[str, float]:
    times: dict[str, float] = {}
    started = time.perf_counter()
    session = await backend.open("bench")
    times["start session"] = time.perf_counter() - started
    for name, code in (("trivial call", "1 + 1"), ("pandas + matplotlib chart (first)", CHART), ("chart again", CHART)):
        started = time.perf_counter()
        result = await session.call(code)
        assert result.error is None, result.error
        times[name] = time.perf_counter() - started
    started = time.perf_counter()
    await session.close()
    times["close (kill, namespaces gone)"] = time.perf_counter() - started
    return times


async def main(sessions: int) -> None:
    found = probe()
    print(f"sandbox: {found.detail}" if found.ok else f"no sandbox here: {found.detail}")
    if not found.ok:
        return
    backend = BubblewrapBackend(SandboxLimits())
    rows = [await _one(backend) for _ in range(sessions)]
    print(f"{'step':36} {'median ms':>10} {'max ms':>10}")
    for name in rows[0]:
        values = [r[name] * 1000 for r in rows]
        print(f"{name:36} {statistics.median(values):10.1f} {max(values):10.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    asyncio.run(main(parser.parse_args().sessions))
