"""Cold start of the API function: import-and-init of its handler vs a bare `import fastapi`.

Each figure is the median of N fresh interpreters, measured in the same run. Target ratio <= 1.5.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 15

TIMED = "import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"


def measure(stmt: str) -> float:
    samples = []
    for _ in range(RUNS):
        out = subprocess.run(
            [sys.executable, "-c", TIMED.format(stmt=stmt)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": "/usr/bin:/bin", "PA_ENV": "aws", "PYTHONPATH": str(ROOT)},
        )
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(samples)


def main() -> None:
    measure("import functions.api.app")  # warm the bytecode caches once
    baseline = measure("import fastapi")
    handler = measure("import functions.api.app")
    print(f"bare `import fastapi`          median {baseline * 1000:7.1f} ms  ({RUNS} runs)")
    print(f"API handler import + init      median {handler * 1000:7.1f} ms  ({RUNS} runs)")
    print(f"ratio handler / fastapi        {handler / baseline:.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
