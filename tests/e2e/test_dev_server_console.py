"""What `pa dev` prints, as a user sees it in their terminal: a quiet start (its banner, nothing else), then one
access line per request in the one log format (a JSON object per line, as the Lambda functions write them: level,
message, timestamp, service, logger name), and none of the libraries' noise — no rich multi-line `httpx` entries per
MCP discovery, no "session manager shutting down" per `/mcp` call, no embedded Postgres chatter when it stops."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.pa_dev import running_pa_dev

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
NOISE = ("HTTP Request:", "session manager", "Terminating session", "StreamableHTTP", "pg_ctl", "INFO     ")
FORMAT_KEYS = {"level", "location", "message", "timestamp", "service", "name"}


class Requests:
    """An HTTP client that remembers every request it made: (method, path without the query, status)."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.made: list[tuple[str, str, int]] = []

    def __call__(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = self.http.request(method, path, **kwargs)
        self.made.append((method, path.split("?")[0], response.status_code))
        return response


def test_pa_dev_prints_one_access_line_per_request_and_no_library_noise(tmp_path: Path) -> None:
    startup: list[str] = []
    console: list[str] = []
    with running_pa_dev(tmp_path / "data", org="acme", startup=startup, console=console) as server:
        admin = server.auth_for("alice", "admin", org="acme")
        with httpx.Client(base_url=server.url, headers=admin, timeout=60) as http:
            call = Requests(http)
            assert call("GET", "/healthz").status_code == 200
            servers = call("GET", "/api/v1/admin/mcp-servers").json()["items"]
            demo = next(s for s in servers if s["name"] == "demo")
            for _ in range(2):  # MCP discovery: the dev server asks the demo MCP server for its tools
                discovered = call("GET", f"/api/v1/admin/mcp-servers/{demo['id']}/tools")
                assert "weather" in discovered.text, discovered.text
            for body in (INITIALIZE, LIST_TOOLS):  # the platform's own MCP server, one server session per call
                answered = call("POST", "/mcp", json=body, headers=MCP_HEADERS)
                assert answered.status_code == 200 and "error" not in answered.json(), answered.text
            assert call("GET", "/api/v1/chats?limit=5&cursor=not-a-secret-but-a-query").status_code in (200, 400, 422)
            assert call("GET", "/api/v1/no-such-route").status_code == 404

    # A quiet start: before the banner, at most a warning in the format (this machine has no XDG_RUNTIME_DIR, and
    # the embedded Postgres says so), never a library's INFO chatter.
    assert "Personal Agent is running at" in startup[-1], "".join(startup)
    early = [json.loads(line) for line in startup[:-1]]
    assert all(FORMAT_KEYS <= set(r) and r["level"] in ("WARNING", "ERROR") for r in early), startup
    printed = startup + console
    assert [line for line in printed if any(noise in line for noise in NOISE)] == []
    # After the banner: JSON lines only, in one format, and what `pa dev` itself says when it stops.
    banner = [line for line in console if line.startswith(("  log in:", "          or run", "  data:"))]
    rest = [line for line in console if line not in banner]
    assert [line for line in rest if not line.startswith("{")] == ["pa dev: stopped\n"], "".join(rest)
    records = [json.loads(line) for line in rest if line.startswith("{")]
    assert all(FORMAT_KEYS <= set(record) for record in records), records
    access = [r for r in records if r["name"] == "personal_agent.access"]
    assert Counter((r["method"], r["path"], r["status"]) for r in access) == Counter(call.made)
    assert all(r["message"] == f"{r['method']} {r['path']} {r['status']} {r['duration_ms']} ms" for r in access)
    assert not any("not-a-secret" in line for line in printed)  # a query string may carry what a log must not
    # No invocation context of the Lambda handlers the dev server runs in process leaks into its lines.
    assert not any("function_name" in record for record in records), records
