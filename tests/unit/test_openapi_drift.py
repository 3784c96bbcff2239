"""The checked-in contract is the API's: `frontend/src/api/openapi.json` is what the dev app's `openapi()` says, and
`schema.d.ts` is what `npm run gen:api` makes of it. After changing a route, `make openapi` rewrites both."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from personal_agent.local.openapi_export import DOCUMENT, dev_document, render

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
STALE = "run `make openapi` and commit the result"


def test_the_checked_in_document_is_what_the_app_serves() -> None:
    expected = render(dev_document())
    checked_in = (ROOT / DOCUMENT).read_text(encoding="utf-8")
    if checked_in != expected:
        diff = difflib.unified_diff(
            checked_in.splitlines(), expected.splitlines(), "checked in", "app.openapi()", lineterm="", n=2
        )
        pytest.fail(f"{DOCUMENT} is stale ({STALE}):\n" + "\n".join(list(diff)[:200]))


def test_the_document_is_sorted_and_indented_for_readable_diffs() -> None:
    text = (ROOT / DOCUMENT).read_text(encoding="utf-8")
    assert text == render(json.loads(text))


def test_gen_api_reads_the_checked_in_document() -> None:
    script = json.loads((FRONTEND / "package.json").read_text())["scripts"]["gen:api"]
    assert f" {DOCUMENT.relative_to('frontend')} " in f" {script} " and "-o src/api/schema.d.ts" in script, script


@pytest.mark.timeout(300)
def test_the_generated_types_are_what_the_generator_makes_of_the_document() -> None:
    npm = shutil.which("npm")
    assert npm, "npm is needed to check the web chat's generated API types (Node 20+)"
    if not (FRONTEND / "node_modules").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True, timeout=240)
    # openapi-typescript's --check generates from the document and compares with schema.d.ts (exit 1 on drift).
    done = subprocess.run(
        [npm, "run", "--silent", "gen:api", "--", "--check"], cwd=FRONTEND, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"src/api/schema.d.ts is stale ({STALE}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
