"""Schemathesis over the whole OpenAPI document of the dev app — examples, coverage, fuzzing and the stateful
phase (following the document's links to the chats, runs, workflows, providers and keys it creates) — with the
`not_a_server_error` and `response_schema_conformance` checks, against the live loopback server.

The caller is an org admin of a fresh org (so admin routes are reached; platform-admin routes answer 403 and
nothing outside that org changes). Settings and the seed are in `schemathesis.toml` beside this file; set
`PA_FUZZ_ARGS` to add CLI options (e.g. `--report har`) when digging into a run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.auth import auth_headers

HERE = Path(__file__).resolve().parent
CHECKS = "not_a_server_error,response_schema_conformance"
PHASES = "examples,coverage,fuzzing,stateful"


def _summary(output: str) -> str:
    """The phases (with the stateful phase's scenarios and links covered) and the closing summary (operations,
    cases, failures): what the closing note quotes."""
    phases = re.search(r"^[^\n]*Examples \(.*?(?=^=+)", output, re.M | re.S)
    start = output.find("API Operations:")
    closing = output[start:] if start >= 0 else output[-4000:]
    return (phases.group(0) if phases else "") + closing


@pytest.mark.timeout(900)  # the fuzzer's own bound: the suite's 300 s cut it off on a loaded machine (~290 operations)
def test_the_whole_api_has_no_server_errors_and_matches_its_schema(
    live_url: str, make_tenant: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import pydantic_ai.models

    from personal_agent.settings import get_settings

    # Runs the fuzzer starts may name org providers it made up: no model request may leave the machine.
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", False)
    # Event streams (the feed never ends by itself) close after a moment, so each request returns.
    monkeypatch.setattr(get_settings(), "sse_max_lifetime_seconds", 0.5)
    tenant = make_tenant(roles=("user", "org-admin"))
    token = auth_headers(tenant, roles=("user", "org-admin"))["Authorization"]
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file",
        str(HERE / "schemathesis.toml"),
        "--no-color",
        "run",
        f"{live_url}/openapi.json",
        "--checks",
        CHECKS,
        "--phases",
        PHASES,
        "--header",
        f"Authorization: {token}",
        *os.environ.get("PA_FUZZ_ARGS", "").split(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    summary = _summary(done.stdout)
    print(summary)  # the closing note quotes it (pytest -s, or -rA)

    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-4000:]
    operations = re.search(r"Selected: (\d+)/(\d+)\s+Tested: (\d+)", summary)
    assert operations is not None and len(set(operations.groups())) == 1, summary  # every operation, all tested
    cases = re.search(r"(\d+) generated, (\d+) passed", summary)
    assert cases is not None and cases.group(1) == cases.group(2), summary
