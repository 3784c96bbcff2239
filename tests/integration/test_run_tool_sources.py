"""`GET /runs/{id}` names where each tool of the run's snapshot comes from (what the web chat's tool cards show):
its MCP server, the server's trust tier, and whether its results are untrusted."""

from __future__ import annotations

from typing import Any

import httpx

from personal_agent.local.demo_mcp import DemoLog
from tests.auth import auth_headers
from tests.live_server import LiveServer
from tests.mcp_demo import ADMIN, register, run
from tests.scripted import scripted_model, text_then_tool


async def test_the_run_view_lists_each_tools_server_tier_and_trust(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[LiveServer, DemoLog]
) -> None:
    server, _ = demo
    tenant = make_tenant(roles=ADMIN)
    headers = auth_headers(tenant, roles=ADMIN)
    await register(http, headers, server.url, name="outside", tier=0)
    script = text_then_tool(rounds=1, tool="outside_weather", args='{"city": "Tokyo"}')
    with scripted_model(script) as (model, _):
        started, frames = await run(http, headers, model, ["outside_weather", "calculate"], "inline")
    assert frames[-1].type == "RUN_FINISHED"
    view = (await http.get(f"/api/v1/runs/{started['run_id']}", headers=headers)).json()
    assert {t["name"]: t for t in view["tools"]} == {
        "outside_weather": {
            "name": "outside_weather",
            "server": "outside",
            "trust_tier": 0,
            "acts": False,
            "untrusted": True,
        },
        "calculate": {"name": "calculate", "server": None, "trust_tier": 2, "acts": False, "untrusted": False},
    }

    stranger = auth_headers(make_tenant())
    assert (await http.get(f"/api/v1/runs/{started['run_id']}", headers=stranger)).status_code == 404
