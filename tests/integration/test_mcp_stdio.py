"""An MCP server started as a local command over stdio (local mode only): discovered, and its tool called by a
run; on AWS such a server is refused."""

from __future__ import annotations

import sys
from typing import Any

import httpx
import pytest

from personal_agent.errors import InvalidInput
from personal_agent.mcp_servers import service
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.mcp_demo import ADMIN, run
from tests.scripted import scripted_model, text_then_tool

COMMAND = f"{sys.executable} -m personal_agent.local.demo_mcp"


async def test_a_stdio_server_is_discovered_and_its_tool_runs(
    http: httpx.AsyncClient, make_tenant: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "mcp_stdio_commands", COMMAND)  # the operator's list of stdio commands
    headers = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    created = await http.post(
        "/api/v1/admin/mcp-servers",
        headers=headers,
        json={"name": "local-demo", "url": COMMAND, "transport": "stdio", "trust_tier": 2},
    )
    assert created.status_code == 201, created.text
    tools = await http.get(f"/api/v1/admin/mcp-servers/{created.json()['id']}/tools", headers=headers)
    assert tools.json()["reachable"] is True, tools.text
    assert {t["name"] for t in tools.json()["tools"]} == {"local-demo_weather", "local-demo_post_note"}

    script = text_then_tool(rounds=1, tool="local-demo_weather", args='{"city": "Tokyo"}')
    with scripted_model(script) as (model, _):
        _, frames = await run(http, headers, model, ["local-demo_weather"], "inline")
    assert [f.data["content"] for f in frames if f.type == "TOOL_CALL_RESULT"] == ["Tokyo: clear, 21 °C"]
    assert frames[-1].type == "RUN_FINISHED"


def test_stdio_is_refused_outside_local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(get_settings(), "environment", "aws")
    with pytest.raises(InvalidInput) as refused:
        service.check_transport("stdio")
    assert refused.value.code == "stdio_local_only"
