"""MCP servers end to end, against the project's demo MCP server on loopback: registration with sealed auth
headers, discovery, runs calling MCP tools (inline and durable alike), a server that is down, the tier gate,
and tenancy."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

import boto3
import httpx
import psycopg
import pytest
import redis
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from personal_agent.bus.key_names import run_stream
from personal_agent.local.demo_mcp import DemoLog, demo_mcp_app
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.live_server import LiveServer
from tests.mcp_demo import ADMIN, SECRET, normalized, register, run
from tests.scripted import scripted_model, text_then_tool
from tests.sfn import wait_for_execution


async def test_register_discover_and_the_headers_stay_write_only(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[LiveServer, DemoLog]
) -> None:
    server, log = demo
    headers = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    created = await register(http, headers, server.url)
    assert SECRET not in json.dumps(created) and created["header_names"] == ["Authorization"]
    tools = await http.get(f"/api/v1/admin/mcp-servers/{created['id']}/tools", headers=headers)
    assert tools.status_code == 200, tools.text
    found = {t["name"]: t for t in tools.json()["tools"]}
    assert tools.json()["reachable"] is True and set(found) == {"demo_weather", "demo_post_note"}
    assert (found["demo_post_note"]["acts"], found["demo_weather"]["acts"]) == (True, False)
    assert any(h.get("authorization") == SECRET for h in log.headers)  # unsealed for the connection only

    offered = (await http.get("/api/v1/tools", headers=headers)).json()["items"]
    by_name = {t["name"]: t for t in offered}
    assert by_name["demo_weather"]["source"] == "mcp" and by_name["calculate"]["source"] == "first_party"

    patched = await http.patch(
        f"/api/v1/admin/mcp-servers/{created['id']}", headers=headers, json={"allowed_tools": ["weather"]}
    )
    assert patched.status_code == 200 and patched.json()["allowed_tools"] == ["weather"]
    again = await http.get(f"/api/v1/admin/mcp-servers/{created['id']}/tools?refresh=false", headers=headers)
    assert [t["name"] for t in again.json()["tools"]] == ["demo_weather"]
    views = [
        (await http.get(u, headers=headers)).text
        for u in ("/api/v1/admin/mcp-servers", f"/api/v1/admin/mcp-servers/{created['id']}")
    ]
    assert all(SECRET not in v and "mcp-secret" not in v for v in views)
    dupe = await http.post(
        "/api/v1/admin/mcp-servers", headers=headers, json={"name": "demo", "url": server.url, "trust_tier": 1}
    )
    assert (dupe.status_code, dupe.json()["code"]) == (409, "mcp_server_exists")
    bad = await http.post(
        "/api/v1/admin/mcp-servers", headers=headers, json={"name": "Bad_Name", "url": server.url, "trust_tier": 1}
    )
    assert bad.status_code == 422
    assert (await http.delete(f"/api/v1/admin/mcp-servers/{created['id']}", headers=headers)).status_code == 204
    gone = await http.get(f"/api/v1/admin/mcp-servers/{created['id']}", headers=headers)
    assert (gone.status_code, gone.json()["code"]) == (404, "mcp_server_not_found")


async def test_inline_and_durable_runs_call_an_mcp_tool_with_the_same_events_and_the_secret_stays_out(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    demo: tuple[LiveServer, DemoLog],
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    server, log = demo
    tenant = make_tenant(roles=ADMIN)
    headers = auth_headers(tenant, roles=ADMIN)
    await register(http, headers, server.url)
    script = text_then_tool(rounds=1, tool="demo_weather", args='{"city": "Paris"}')
    with scripted_model(script) as (model, _):
        inline, inline_frames = await run(http, headers, model, ["demo_weather"], "inline")
        durable, durable_frames = await run(http, headers, model, ["demo_weather"], "durable")
    assert normalized(durable_frames) == normalized(inline_frames)
    assert inline_frames[-1].type == "RUN_FINISHED"
    results = [f.data["content"] for f in inline_frames if f.type == "TOOL_CALL_RESULT"]
    assert results == ["Paris: light rain, 14 °C"]
    assert sum(1 for h in log.headers if h.get("authorization") == SECRET) >= 4  # every step connects

    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT execution_arn FROM runs WHERE id = %s", [durable["run_id"]]).fetchone()
        assert row is not None
        arn = row[0]
        stored = json.dumps(list(conn.execute("SELECT spec::text FROM runs WHERE org_id = %s", [tenant.org_id])))
    sfn = boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    assert wait_for_execution(sfn, arn)["status"] == "SUCCEEDED"
    history = json.dumps(sfn.get_execution_history(executionArn=arn)["events"], default=str)
    with redis.from_url(str(get_settings().redis_url)) as r:
        events = json.dumps(
            [
                str(v)
                for rid in (inline["run_id"], durable["run_id"])
                for _, v in r.xrange(run_stream(tenant.org_id, rid))
            ]
        )
    api = json.dumps([(await http.get(f"/api/v1/runs/{d['run_id']}", headers=headers)).text for d in (inline, durable)])
    out, err = capfd.readouterr()
    for place, text in {"history": history, "events": events, "stored": stored, "api": api}.items():
        assert "mcp-secret" not in text, place
    assert "mcp-secret" not in caplog.text + out + err


async def test_a_server_that_is_down_is_reported_and_the_run_goes_on_without_it(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    headers = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    log = DemoLog()
    server = LiveServer(demo_mcp_app(log)).start()
    created = await register(http, headers, server.url)
    assert (await http.get(f"/api/v1/admin/mcp-servers/{created['id']}/tools", headers=headers)).json()["reachable"]
    server.stop()  # down after discovery: the launch keeps the last known tools, the step cannot connect

    down = (await http.get(f"/api/v1/admin/mcp-servers/{created['id']}/tools", headers=headers)).json()
    assert down["reachable"] is False and down["error"] and down["tools"] == []
    seen: list[list[str]] = []

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> Any:
        seen.append([t.name for t in info.function_tools])
        yield "No weather today."

    with scripted_model(answer) as (model, _):
        started, frames = await run(http, headers, model, ["demo_weather"], "inline")
    assert frames[-1].type == "RUN_FINISHED"
    unavailable = [f.data["value"] for f in frames if f.type == "CUSTOM" and f.data["name"] == "tools_unavailable"]
    assert unavailable and unavailable[0]["servers"][0]["tools"] == ["demo_weather"]
    assert seen and all("demo_weather" not in names for names in seen)
    status = (await http.get(f"/api/v1/runs/{started['run_id']}", headers=headers)).json()
    assert status["status"] == "succeeded"


async def test_the_tier_gate_drops_a_tool_below_the_runs_tier_and_reports_it(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[LiveServer, DemoLog]
) -> None:
    server, _ = demo
    headers = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    await register(http, headers, server.url, name="open", tier=0)
    seen: list[list[str]] = []

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> Any:
        seen.append([t.name for t in info.function_tools])
        yield "Done."

    with scripted_model(answer) as (model, _):
        started, frames = await run(
            http, headers, model, ["open_weather", "calculate"], "inline", classification="confidential"
        )
    gated = [f.data["value"] for f in frames if f.type == "CUSTOM" and f.data["name"] == "tool_gated"]
    assert gated == [{"tools": [{"name": "open_weather", "server": "open", "trust_tier": 0, "required_tier": 1}]}]
    assert seen == [["calculate"]]
    view = (await http.get(f"/api/v1/runs/{started['run_id']}", headers=headers)).json()
    assert view["gated_tools"] == gated[0]["tools"]

    with scripted_model(answer) as (model, _):  # a standard chat (tier 0) keeps it
        started, frames = await run(http, headers, model, ["open_weather"], "inline")
    assert not any(f.type == "CUSTOM" and f.data["name"] == "tool_gated" for f in frames)
    assert seen[-1] == ["open_weather"]


async def test_org_b_never_sees_org_a_servers_or_tools(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[LiveServer, DemoLog]
) -> None:
    server, _ = demo
    a = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    b = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    created = await register(http, a, server.url)
    await http.get(f"/api/v1/admin/mcp-servers/{created['id']}/tools", headers=a)
    path = f"/api/v1/admin/mcp-servers/{created['id']}"
    for method, url in (("GET", path), ("PATCH", path), ("DELETE", path), ("GET", f"{path}/tools")):
        answer = await http.request(method, url, headers=b, json={"enabled": False} if method == "PATCH" else None)
        assert (answer.status_code, answer.json()["code"]) == (404, "mcp_server_not_found"), (method, url)
    assert (await http.get("/api/v1/admin/mcp-servers", headers=b)).json()["items"] == []
    names = [t["name"] for t in (await http.get("/api/v1/tools", headers=b)).json()["items"]]
    assert "demo_weather" not in names
    chat = (await http.post("/api/v1/chats", json={}, headers=b)).json()
    refused = await http.post(
        f"/api/v1/chats/{chat['id']}/runs", headers=b, json={"message": "hi", "tools": ["demo_weather"]}
    )
    assert (refused.status_code, refused.json()["code"]) == (422, "unknown_tool")
    users = await http.get("/api/v1/admin/mcp-servers", headers=auth_headers(make_tenant()))
    assert users.status_code == 403
