"""The web chat's own unit tests (Vitest: the SSE parser and the stream client's resume logic) run with pytest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

FRONTEND = Path(__file__).resolve().parents[2] / "frontend"


@pytest.mark.timeout(300)
def test_vitest_suite_passes() -> None:
    npm = shutil.which("npm")
    assert npm, "npm is needed for the web chat's unit tests (Node 20+)"
    if not (FRONTEND / "node_modules").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True, timeout=240)
    result = subprocess.run(
        [npm, "test", "--", "--reporter=dot"], cwd=FRONTEND, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, f"vitest failed:\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
    assert " passed" in result.stdout, result.stdout[-3000:]
