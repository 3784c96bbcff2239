"""The API function's import must not load the heavy SDKs only the run workers need."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = [
    *("pydantic_ai", "openai", "anthropic", "boto3", "mcp"),
    # Loaded where they are used, not at cold start: URL checks, cron schedules, FastAPI's v1-model probe.
    *("httpx", "cronsim", "pydantic.v1"),
    # The routers and what they import: with their first request (`fastpaths.lazy_routers`).
    *(f"personal_agent.api.{group}" for group in ("chats", "runs", "workflows", "workflow_outputs", "knowledge")),
    *("personal_agent.lifecycle.launch", "personal_agent.workflows.service", "personal_agent.knowledge.documents"),
]
ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_api_handler_loads_no_heavy_sdk() -> None:
    code = (
        "import json, sys; import functions.api.app as m; assert callable(m.handler); "
        f"print(json.dumps([name for name in {HEAVY!r} if name in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PA_ENV": "aws", "PYTHONPATH": str(ROOT)},
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
