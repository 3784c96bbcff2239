"""`/mcp` is routed by the API, yet the `mcp` SDK loads on its first authenticated request, not at cold start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_api_routes_mcp_without_importing_the_sdk() -> None:
    code = (
        "import json, sys; import functions.api.app as m; from personal_agent.api.app import create_app; "
        "paths = [getattr(r, 'path', '') for r in create_app().routes]; "
        "print(json.dumps({'mcp_route': '/mcp' in paths, 'loaded': sorted(n for n in sys.modules "
        "if n == 'mcp' or n.startswith(('mcp.', 'mcp_types')))}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PA_ENV": "aws", "PYTHONPATH": str(ROOT)},
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"mcp_route": True, "loaded": []}
