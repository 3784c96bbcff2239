"""The test suite's own shape: no test module imports from another test module (shared helpers live in modules
not named `test_*`), and the browser fixtures are defined once, in `tests/e2e/conftest.py`."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
IMPORTS_A_TEST_MODULE = re.compile(r"^\s*from tests\.(\w+\.)*test_\w+ import|^\s*import tests\.(\w+\.)*test_", re.M)
BROWSER_FIXTURE = re.compile(r"^def (browser|web)\(|sync_playwright\(\)|\bchromium\(\)", re.M)


def test_no_test_module_imports_another() -> None:
    offenders = [str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py") if IMPORTS_A_TEST_MODULE.search(p.read_text())]
    assert offenders == []


def test_the_browser_fixtures_are_defined_once() -> None:
    defined = [
        str(p.relative_to(TESTS)) for p in (TESTS / "e2e").glob("test_*.py") if BROWSER_FIXTURE.search(p.read_text())
    ]
    assert defined == []
    assert re.findall(r"^def (\w+)\(", (TESTS / "e2e" / "conftest.py").read_text(), re.M)[:4] == [
        "web_env",
        "web",
        "browser",
        "page",
    ]
