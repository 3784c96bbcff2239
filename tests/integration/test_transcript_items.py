"""The stored transcript carries what the live view showed (issue 30, item 1): a tool call's approval with its
decision, who decided (by name) and why, and the tool result's real outcome; a `delegate` call's sub-agent with
its status, cost and the approvals its own calls asked for; and how each run ended (a failed run's error)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from personal_agent.db import system_transaction
from personal_agent.identity import user_store
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from tests.auth import auth_headers
from tests.email_tool import email_script, launch_email_run
from tests.scripted import scripted_model
from tests.sse import Frame, read_events
from tests.subagents import delegating, user_text


async def _approval_id(http: httpx.AsyncClient, headers: dict[str, str], run_id: Any) -> str:
    frames: list[Frame] = []
    while not any(f.data.get("name") == "approval_requested" for f in frames):
        frames = await read_events(http, f"/api/v1/runs/{run_id}/events", headers, limit=len(frames) + 1)
    return str(next(f.data["value"]["approval_id"] for f in frames if f.data.get("name") == "approval_requested"))


def _call(items: list[dict[str, Any]], name: str) -> dict[str, Any]:
    calls: list[dict[str, Any]] = [c for i in items for c in i.get("tool_calls") or [] if c["name"] == name]
    (call,) = calls
    return call


async def _name(tenant: Any, name: str) -> None:
    """The person's display name, as their identity provider's next sign-in keeps it."""
    async with system_transaction() as conn:
        await user_store.update_profile(conn, tenant.user_id, None, name)


@pytest.mark.parametrize("mode", ["inline", "durable"])
async def test_a_denied_call_keeps_its_decision_decider_reason_and_outcome(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]], mode: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    await _name(tenant, "Alice Example")
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model, mode=mode)
        approval_id = await _approval_id(http, headers, spec.run_id)
        body = {"decision": "deny", "reason": "not to bob"}
        denied = await http.post(f"/api/v1/approvals/{approval_id}", json=body, headers=headers)
        assert denied.status_code == 200, denied.text
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers, timeout=60)
    (result,) = [f.data for f in frames if f.type == "TOOL_CALL_RESULT"]
    assert result["metadata"] == {"outcome": "denied"}  # live, the same word as stored
    page = (await http.get(f"/api/v1/chats/{spec.chat_id}/messages", headers=headers)).json()

    call = _call(page["items"], "send_email")
    assert call["approval"] == {
        "id": approval_id,
        "tool": "send_email",
        "args": {"to": "bob@example.com", "subject": "hi"},
        "status": "denied",
        "decided_by": "Alice Example",
        "reason": "not to bob",
        "decided_at": call["approval"]["decided_at"],
        "expires_at": call["approval"]["expires_at"],
    }
    assert call["approval"]["decided_at"] is not None
    (returned,) = [i for i in page["items"] if i["role"] == "tool"]
    assert returned["outcome"] == "denied" and "not to bob" in returned["content"]
    assert page["runs"] == [{"id": str(spec.run_id), "status": "succeeded", "error": None}]
    assert email_tool == []


parent_script = delegating([{"task": "email bob", "tools": ["send_email"]}])


async def tree(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    script = email_script if user_text(messages) == "email bob" else parent_script
    async for item in script(messages, info):
        yield item


async def test_a_sub_agent_keeps_its_status_cost_and_the_approval_its_call_asked_for(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]]
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    with scripted_model(tree) as (model, _):
        spec = await launch_run(
            LaunchRequest(
                org_id=tenant.org_id,
                user_id=tenant.user_id,
                chat_id=chat["id"],
                message="get bob emailed",
                model=model,
                mode="inline",
                tools=("delegate", "send_email"),
            )
        )
        approval_id = await _approval_id(http, headers, spec.run_id)
        body = {"decision": "approve", "reason": "bob expects it"}
        assert (await http.post(f"/api/v1/approvals/{approval_id}", json=body, headers=headers)).status_code == 200
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers, timeout=60)
    page = (await http.get(f"/api/v1/chats/{chat['id']}/messages", headers=headers)).json()
    (finished,) = [f.data["value"] for f in frames if f.data.get("name") == "subagent_finished"]

    subagent = _call(page["items"], "delegate")["subagent"]
    assert (subagent["task"], subagent["status"], subagent["error"]) == ("email bob", "succeeded", None)
    assert isinstance(subagent["cost_usd"], float) and subagent["cost_usd"] >= 0
    assert finished["cost_usd"] == subagent["cost_usd"]  # live, the card says what the transcript keeps
    assert subagent["events_url"] == f"/api/v1/runs/{subagent['run_id']}/events"
    ((approval),) = subagent["approvals"]
    assert (approval["id"], approval["status"], approval["reason"]) == (approval_id, "approved", "bob expects it")
    assert approval["decided_by"] == f"{tenant.subject}@example.test"  # no display name: the e-mail
    assert [i["outcome"] for i in page["items"] if i["role"] == "tool"] == ["done"]
    assert email_tool == [{"to": "bob@example.com", "subject": "hi"}]


async def broken(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    raise RuntimeError("the model broke")
    yield ""  # an async generator


async def test_a_failed_run_keeps_its_error(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    with scripted_model(broken) as (model, _):
        request = LaunchRequest(
            org_id=tenant.org_id, user_id=tenant.user_id, chat_id=chat["id"], message="hi", model=model, mode="inline"
        )
        spec = await launch_run(request)
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers, timeout=60)
    (error,) = [f.data for f in frames if f.type == "RUN_ERROR"]
    page = (await http.get(f"/api/v1/chats/{chat['id']}/messages", headers=headers)).json()
    (run,) = page["runs"]
    assert (run["id"], run["status"]) == (str(spec.run_id), "failed")
    assert run["error"] == {"code": error["code"], "message": error["message"]}  # what the live view said
