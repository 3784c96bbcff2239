"""Approval policies of MCP tools end to end, against MCP servers on loopback: `always` waits for a person even
when the router is sure, `gate` follows the confidence gate, `never` runs at once even when the router is unsure,
and a tool whose input schema changed since the run's snapshot is refused with a tool error the model sees."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from mcp.server.mcpserver import MCPServer
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.local.demo_mcp import DemoLog
from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.live_server import LiveServer
from tests.mcp_demo import ADMIN, register
from tests.runs import follow_approving
from tests.scripted import scripted_model, tool_rounds
from tests.sse import Frame

NOTE = {"team": "ops", "text": "ship it"}


def post_then_answer(tool: str = "demo_post_note") -> Any:
    """Calls the acting MCP tool once, then answers."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if tool_rounds(messages) == 0:
            yield {0: DeltaToolCall(name=tool, json_args='{"team": "ops", "text": "ship it"}', tool_call_id="post")}
        else:
            yield "Done."

    return script


@pytest.fixture
def router(request: pytest.FixtureRequest) -> Iterator[tuple[str, float]]:
    """A router model that classifies every message as acting, at the confidence the test parametrizes."""
    confidence = float(request.param)
    model_id = f"router:mcp-{confidence}"

    def classify(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = {"intent": "post a note", "acts_on_world": True, "confidence": confidence}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    register_model(model_id, lambda: FunctionModel(classify, model_name="router"), tags=("cheap",), quality=2)
    yield model_id, confidence
    unregister_model(model_id)


async def run_to_end(
    http: httpx.AsyncClient, tenant: Any, router: str, tools: tuple[str, ...], sent: list[Any], script: Any
) -> tuple[list[Frame], bool]:
    """Launch an inline run under the router; approve its acting call if one is requested (checking nothing was
    sent before). Returns its frames and whether it asked."""
    headers = auth_headers(tenant, roles=ADMIN)
    settings = await http.put(
        "/api/v1/admin/settings",
        headers=headers,
        json={"tier_floor": 0, "confidence_threshold": 0.8, "routing_model": router},
    )
    assert settings.status_code == 200, settings.text
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    with scripted_model(script) as (model, _):
        spec = await launch_run(
            LaunchRequest(
                org_id=tenant.org_id,
                user_id=tenant.user_id,
                chat_id=chat["id"],
                message="post 'ship it' to the ops team",
                model=model,
                mode="inline",
                tools=tools,
            )
        )
        assert spec.router_model is not None
        url = f"/api/v1/runs/{spec.run_id}/events"

        def waiting() -> None:
            assert sent == []  # the acting call waits for the person

        frames, asked = await follow_approving(http, url, headers, waiting)
    return frames, asked


async def run_policy(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[LiveServer, DemoLog], router: str, approval: str
) -> tuple[list[Frame], bool, DemoLog]:
    server, log = demo
    tenant = make_tenant(roles=ADMIN)
    policies = {"post_note": {"acts": True, "approval": approval}}
    await register(http, auth_headers(tenant, roles=ADMIN), server.url, policies=policies)
    frames, asked = await run_to_end(http, tenant, router, ("demo_post_note",), log.sent, post_then_answer())
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert log.sent == [NOTE]  # posted exactly once, whether at once or after the approval
    return frames, asked, log


@pytest.mark.parametrize("router", [1.0], indirect=True)
async def test_always_waits_for_a_person_even_when_the_router_is_sure(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[LiveServer, DemoLog], router: tuple[str, float]
) -> None:
    _, asked, _ = await run_policy(http, make_tenant, demo, router[0], "always")
    assert asked


@pytest.mark.parametrize("router", [0.95, 0.3], indirect=True)
async def test_gate_follows_the_confidence_gate(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[LiveServer, DemoLog], router: tuple[str, float]
) -> None:
    model_id, confidence = router
    _, asked, _ = await run_policy(http, make_tenant, demo, model_id, "gate")
    assert asked is (confidence < 0.8)  # the org's threshold


@pytest.mark.parametrize("router", [0.3], indirect=True)
async def test_never_runs_without_approval_even_when_the_router_is_unsure(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[LiveServer, DemoLog], router: tuple[str, float]
) -> None:
    frames, asked, _ = await run_policy(http, make_tenant, demo, router[0], "never")
    assert not asked
    assert [f.data["content"] for f in frames if f.type == "TOOL_CALL_RESULT"] == ["posted to ops"]


@pytest.fixture
def changing() -> Iterator[tuple[LiveServer, MCPServer, list[dict[str, Any]]]]:
    """An MCP server on loopback whose `post_note` the test can replace with one of another input schema."""
    sent: list[dict[str, Any]] = []
    mcp = MCPServer("pa-changing")

    @mcp.tool(description="Post a note to a team's board.")
    def post_note(team: str, text: str) -> str:
        sent.append({"team": team, "text": text})
        return f"posted to {team}"

    server = LiveServer(mcp.streamable_http_app(json_response=True, stateless_http=True)).start()
    yield server, mcp, sent
    server.stop()


@pytest.mark.parametrize("router", [1.0], indirect=True)
async def test_a_tool_whose_schema_changed_since_the_snapshot_is_refused_and_the_run_ends(
    http: httpx.AsyncClient,
    make_tenant: Any,
    changing: tuple[LiveServer, MCPServer, list[dict[str, Any]]],
    router: tuple[str, float],
) -> None:
    server, mcp, sent = changing
    tenant = make_tenant(roles=ADMIN)
    headers = auth_headers(tenant, roles=ADMIN)
    created = await register(
        http, headers, server.url, name="board", policies={"post_note": {"acts": True, "approval": "never"}}
    )
    discovered = await http.get(f"/api/v1/admin/mcp-servers/{created['id']}/tools", headers=headers)
    assert [t["name"] for t in discovered.json()["tools"]] == ["board_post_note"]

    def changed_post_note(team: str, text: str, urgent: bool) -> str:
        sent.append({"team": team, "text": text, "urgent": urgent})
        return f"posted to {team}"

    # The server changes the tool under the same name after the org discovered it; the launch snapshots the
    # discovered schema hash, so the run's step meets a schema other than its snapshot's.
    mcp.remove_tool("post_note")
    mcp.add_tool(changed_post_note, name="post_note", description="Post a note to a team's board.")
    seen: list[str] = []

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        failed = [p for m in messages for p in m.parts if p.part_kind == "tool-return"]
        seen.extend(str(p.content) for p in failed)
        async for item in post_then_answer("board_post_note")(messages, info):
            yield item

    frames, asked = await run_to_end(http, tenant, router[0], ("board_post_note",), sent, script)
    assert not asked and sent == []  # never called on the server
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    results = [f.data["content"] for f in frames if f.type == "TOOL_CALL_RESULT"]
    assert len(results) == 1 and "refused" in results[0] and "input schema of board_post_note" in results[0]
    assert seen and "refused" in seen[0] and "changed since this run started" in seen[0]  # the model saw it
