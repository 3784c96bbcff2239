"""Sub-agents stay under their parent's governance: every child request is a ledger row attributed to the parent
and counted by the budget; a budget reached mid-tree stops the whole tree; a child never gets a tool or a model
its parent could not use; depth and fan-out limits are refused as tool errors the model sees."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import psycopg
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, RetryPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.spec.run_spec import RunSpec
from tests.auth import auth_headers
from tests.scripted import scripted_model
from tests.sse import Frame, read_events
from tests.subagents import delegating, priced_model, run_rows, sleepers, user_text


async def _run(
    http: httpx.AsyncClient,
    tenant: Any,
    model: str,
    tools: tuple[str, ...] = ("delegate", "current_time"),
    mode: str = "inline",
    **chat: Any,
) -> tuple[RunSpec, list[Frame]]:
    headers = auth_headers(tenant)
    created = (await http.post("/api/v1/chats", json=chat, headers=headers)).json()
    spec = await launch_run(
        LaunchRequest(
            org_id=tenant.org_id,
            user_id=tenant.user_id,
            chat_id=created["id"],
            message="split this up",
            model=model,
            mode=mode,  # type: ignore[arg-type]
            tools=tools,
        )
    )
    return spec, await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers, timeout=60)


def _answer(frames: list[Frame]) -> str:
    return "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")


def _ledger(admin_url: str, org_id: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(admin_url) as conn:
        return conn.execute(
            "SELECT run_id, request_index, parent_run_id, root_run_id, cost_usd FROM usage_records"
            " WHERE org_id = %s ORDER BY created_at, run_id",
            [org_id],
        ).fetchall()


async def test_every_child_request_is_a_ledger_row_of_the_parent_and_the_parent_shows_the_tree_total(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    with priced_model(delegating(sleepers(0.1, 0.1, 0.1))) as model:
        spec, frames = await _run(http, tenant, model)
    assert frames[-1].type == "RUN_FINISHED"
    rows = _ledger(admin_url, tenant.org_id)
    children = {c["id"] for c in run_rows(admin_url, spec.run_id)}
    parent_rows = [r for r in rows if r[0] == spec.run_id]
    child_rows = [r for r in rows if r[0] in children]
    assert sorted(r[1] for r in parent_rows) == [0, 1] and all(r[2] is None for r in parent_rows)
    assert len(child_rows) == 3 and {r[0] for r in child_rows} == children  # one request each, one row each
    assert all((r[1], r[2], r[3]) == (0, spec.run_id, spec.run_id) for r in child_rows)
    assert len(rows) == 5 and all(r[4] is not None and r[4] > 0 for r in rows)
    view = (await http.get(f"/api/v1/runs/{spec.run_id}", headers=auth_headers(tenant))).json()
    total = sum((r[4] for r in rows), Decimal(0))
    assert abs(Decimal(str(view["cost_usd"])) - total) < Decimal("0.000001")
    by_child = {str(r[0]): r[4] for r in child_rows}
    assert all(abs(Decimal(str(c["cost_usd"])) - by_child[c["id"]]) < Decimal("0.000001") for c in view["children"])


@pytest.mark.parametrize("mode", ["inline", "durable"])
async def test_a_budget_reached_mid_tree_stops_all_of_it(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, mode: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    # A request reserves about $0.16 (its whole output limit): the parent's first request and two children fit
    # under $0.25 (the parent's settles at its tiny real cost); the third child's request is refused.
    cap = await http.put("/api/v1/admin/budgets", json={"scope": "org", "monthly_usd": "0.25"}, headers=headers)
    assert cap.status_code == 200, cap.text
    with priced_model(delegating(sleepers(5, 5, 5))) as model:
        spec, frames = await _run(http, tenant, model, mode=mode)
    assert frames[-1].type == "RUN_ERROR" and frames[-1].data["code"] == "budget_exceeded"
    started = [f.data["value"] for f in frames if f.data.get("name") == "subagent_started"]
    assert len(started) == 3
    for child in started:  # each child's own stream has ended too
        ended = (await read_events(http, child["events_url"], headers))[-1]
        assert ended.type in ("RUN_FINISHED", "RUN_ERROR")
    children = run_rows(admin_url, spec.run_id)
    codes = sorted((c["status"], (c["error"] or {}).get("code")) for c in children)
    # The refused child failed; the two that were working were stopped, long before their 5 s were up.
    assert codes == [("cancelled", None), ("cancelled", None), ("failed", "budget_exceeded")]
    assert all(c["cancel_requested"] for c in children if c["status"] == "cancelled")
    finished = [f.data["value"]["status"] for f in frames if f.data.get("name") == "subagent_finished"]
    assert sorted(finished) == ["cancelled", "cancelled", "failed"]
    view = (await http.get(f"/api/v1/runs/{spec.run_id}", headers=headers)).json()
    assert (view["status"], view["error"]["code"]) == ("failed", "budget_exceeded")


async def test_a_child_gets_only_tools_the_parent_has_and_never_a_model_it_could_not_use(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant()
    offered: list[list[str]] = []
    with priced_model(delegating([]), tier=0) as tier0:  # an enabled model, but below restricted data's tier
        calls = [
            {"task": "sleep 0.1", "tools": ["current_time"]},
            {"task": "sleep 0.1", "tools": ["send_demo_message"]},
            {"task": "sleep 0.1", "model": tier0},
        ]
        with scripted_model(delegating(calls, offered)) as (model, _):
            spec, frames = await _run(http, tenant, model, classification="restricted")
    assert frames[-1].type == "RUN_FINISHED"
    answer = _answer(frames)
    assert "slept 0.1" in answer  # the child with a subset of the parent's tools ran
    assert "only get tools this run has; not available here: send_demo_message" in answer
    assert f"{tier0!r} is not one" in answer
    assert offered[0] == ["current_time", "delegate"] and offered[1] == ["current_time"]  # parent's, child's
    assert spec.routing_tier == 2


async def test_depth_and_fan_out_past_their_limits_are_tool_errors_the_model_sees(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    with scripted_model(delegating([{"task": f"sleep 0.{n}"} for n in range(1, 6)])) as (model, _):
        spec, frames = await _run(http, tenant, model)
    assert frames[-1].type == "RUN_FINISHED"
    assert len(run_rows(admin_url, spec.run_id)) == 4
    assert "one response may start at most 4 sub-agents; this call was not started" in _answer(frames)

    # Every level delegates `go deeper`: the root (depth 0) and its child (1) may, the grandchild (2) may not.
    with scripted_model(delegating([{"task": "go deeper"}])) as (model, _):
        spec, frames = await _run(http, tenant, model)
    assert frames[-1].type == "RUN_FINISHED"
    (child,) = run_rows(admin_url, spec.run_id)
    (grandchild,) = run_rows(admin_url, child["id"])
    assert run_rows(admin_url, grandchild["id"]) == [] and grandchild["spec"]["depth"] == 2
    assert "sub-agents may nest at most 2 deep" in _answer(frames)


async def test_a_childs_failure_is_an_error_result_the_parent_model_handles(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    with scripted_model(delegating([{"task": "break"}, {"task": "sleep 0.1"}])) as (model, _):
        spec, frames = await _run(http, tenant, model)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    broken, slept = run_rows(admin_url, spec.run_id)
    assert (broken["status"], broken["error"]["code"], slept["status"]) == ("failed", "model_error", "succeeded")
    answer = _answer(frames)
    assert '"status":"failed"' in answer and '"code":"model_error"' in answer and "slept 0.1" in answer


def _rounds(total: int) -> Any:
    """A parent that keeps delegating (4 `sleep 0` tasks a response) until it made `total` calls, then reports
    every refusal it saw; its children sleep."""
    sleeper = delegating([])

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if user_text(messages).startswith("sleep"):
            async for item in sleeper(messages, info):
                yield item
            return
        made = sum(1 for m in messages if isinstance(m, ModelResponse) for c in m.tool_calls)
        if made < total:
            calls = range(made, min(made + 4, total))
            yield {
                i: DeltaToolCall(name="delegate", json_args='{"task": "sleep 0"}', tool_call_id=f"r{i}") for i in calls
            }
            return
        parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts]
        said = [
            p.model_response() if isinstance(p, RetryPromptPart) else p.model_response_str()
            for p in parts
            if isinstance(p, RetryPromptPart | ToolReturnPart)
        ]
        yield "Refusals: " + " | ".join(text for text in said if "at most" in text)

    return script


async def test_a_run_starting_more_children_than_its_limit_is_refused_as_a_tool_error(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    with scripted_model(_rounds(17)) as (model, _):
        spec, frames = await _run(http, make_tenant(), model)
    assert frames[-1].type == "RUN_FINISHED"
    assert len(run_rows(admin_url, spec.run_id)) == 16  # four rounds of four; the 17th call was not started
    assert "this run may start at most 16 sub-agents in all" in _answer(frames)
