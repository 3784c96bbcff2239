"""No dead definitions in the library: vulture finds no unused function, method, class, property or import in
`shared/` and `functions/` (the tests and benchmarks count as users). What it cannot see being used (hooks a
library calls by name, functions the tool registry imports by name) is listed in `tests/vulture_whitelist.py`.
Model fields (pydantic, dataclasses) are read by serializers, so unused variables count only when vulture is sure."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Routes, exception handlers, validators and fixtures are used by whoever registers them.
DECORATORS = "@*router.*,@router.*,@*.exception_handler,@*.middleware,@pytest.fixture,@*_validator"
DEAD = re.compile(r": unused (function|method|class|property|import) |\(100% confidence\)$")


def dead_code() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "vulture", "shared", "functions", "tests", "bench", "tests/vulture_whitelist.py"]
        + ["--min-confidence", "60", "--ignore-decorators", DECORATORS, "--exclude", "*/node_modules/*"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return [
        line for line in out.stdout.splitlines() if line.startswith(("shared/", "functions/")) and DEAD.search(line)
    ]


def test_the_library_has_no_dead_definitions() -> None:
    assert dead_code() == []
