"""The raised tier applies to the MCP tools still offered (issue 28, item 2): a run that retrieves a restricted
passage stops offering the tools of an MCP server trusted below that tier for the rest of the run (before: the
tier gate ran at launch only, so the passage could go out as a tool call's arguments to a tier-1 server)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.knowledge import make_pdf, upload_and_wait
from tests.mcp_demo import register, serve_demo
from tests.sse import read_events


async def test_a_restricted_passage_takes_a_lower_tier_servers_tools_out_of_the_run(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    text = "Project Falcon launch date: the ninth of June (board only)."
    await upload_and_wait(
        http, headers, tenant, "falcon.pdf", "application/pdf", make_pdf([text]), classification="restricted"
    )
    offered: list[list[str]] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        offered.append(sorted(t.name for t in info.function_tools))
        if not any(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts):
            args = json.dumps({"query": "Falcon launch date"})
            yield {0: DeltaToolCall(name="search_knowledge", json_args=args, tool_call_id="kb_1")}
            return
        yield "Done."

    model_id = f"test:{uuid.uuid4().hex[:8]}"
    register_model(model_id, lambda: FunctionModel(stream_function=stream, model_name="internal"), tier=2)
    try:
        with serve_demo() as (server, _):
            await register(http, headers, server.url, name="regulated", tier=1)
            chat = (await http.post("/api/v1/chats", json={"title": "t"}, headers=headers)).json()["id"]
            body = {
                "message": "when does Falcon launch?",
                "model": model_id,
                "mode": "inline",
                "tools": ["search_knowledge", "regulated_weather"],
            }
            started = await http.post(f"/api/v1/chats/{chat}/runs", json=body, headers=headers)
            assert started.status_code == 202, started.text
            frames = await read_events(http, started.json()["events_url"], headers)
    finally:
        unregister_model(model_id)
    assert frames[-1].type == "RUN_FINISHED"
    assert offered[0] == ["regulated_weather", "search_knowledge"]  # a standard chat: the tier-1 server passes
    assert "regulated_weather" not in offered[1]  # once the restricted passage is in, it no longer does
