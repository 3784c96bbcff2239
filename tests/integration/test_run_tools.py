"""Tools in pydantic-ai's idiom: a tool taking `RunContext[RunDeps]` gets the run it serves (and the run's
org-scoped database); a run past its tool-call limit fails with `limit_exceeded` before the calls past it run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.runs import store
from personal_agent.spec.run_deps import RunDeps
from personal_agent.tools.registry import ToolDef, register_tool, unregister_tool
from tests.auth import auth_headers
from tests.runs import start_run
from tests.scripted import scripted_model, text_then_tool, tool_rounds
from tests.sse import read_events


async def whoami(ctx: RunContext[RunDeps], label: str) -> str:
    """Say which run and org this call serves, as the run's own database session sees the run."""
    async with ctx.deps.db() as conn:
        row = await store.get_run(conn, ctx.deps.run_id)
    assert row is not None
    return f"{label}: run {ctx.deps.run_id} of org {ctx.deps.org_id} is {row.status}"


@pytest.fixture
def whoami_tool() -> Iterator[None]:
    register_tool(ToolDef("whoami", whoami, "Say which run this is."))
    yield
    unregister_tool("whoami")


async def test_a_tool_taking_run_context_gets_the_runs_deps(
    http: httpx.AsyncClient, make_tenant: Any, whoami_tool: None
) -> None:
    from personal_agent.lifecycle.launch import LaunchRequest, launch_run

    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    with scripted_model(text_then_tool(tool="whoami", args='{"label": "me"}')) as (model, _):
        spec = await launch_run(
            LaunchRequest(tenant.org_id, tenant.user_id, chat["id"], "who are you?", model, tools=("whoami",))
        )
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
    results = [f.data["content"] for f in frames if f.type == "TOOL_CALL_RESULT"]
    assert results == [f"me: run {spec.run_id} of org {tenant.org_id} is running"]
    assert frames[-1].type == "RUN_FINISHED"


def calls(count: int, start: int) -> dict[int, DeltaToolCall]:
    return {i: DeltaToolCall(name="current_time", json_args="{}", tool_call_id=f"t{start + i}") for i in range(count)}


async def test_a_run_past_its_tool_call_limit_fails_before_those_calls_run(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    async def many_calls(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        done = tool_rounds(messages)
        if done == 0:
            yield calls(30, 0)  # 30 calls: within the default limit of 50
        else:
            yield calls(21, done)  # 51 in the run: past it

    headers = auth_headers(make_tenant())
    with scripted_model(many_calls) as (model, recorder):
        run = await start_run(http, headers, model)
        frames = await read_events(http, run["events_url"], headers)
    assert len(recorder.calls) == 2
    assert sum(f.type == "TOOL_CALL_RESULT" for f in frames) == 30  # the second round never ran
    assert (frames[-1].type, frames[-1].data["code"]) == ("RUN_ERROR", "limit_exceeded")
    assert "limit of 50 tool calls" in frames[-1].data["message"]
    status = (await http.get(f"/api/v1/runs/{run['run_id']}", headers=headers)).json()
    assert (status["status"], status["error"]["code"]) == ("failed", "limit_exceeded")
