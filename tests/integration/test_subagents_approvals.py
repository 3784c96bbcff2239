"""A child's approval request shows in the approvals inbox and, as an event, on its parent's stream; the parent
waits for the child meanwhile, and goes on with the child's answer once a person approved (inline and durable)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from tests.auth import auth_headers
from tests.email_tool import email_script
from tests.scripted import scripted_model
from tests.sse import Frame, read_events
from tests.subagents import delegating, run_rows, user_text

parent_script = delegating([{"task": "email bob", "tools": ["send_email"]}])


async def tree(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    script = email_script if user_text(messages) == "email bob" else parent_script
    async for item in script(messages, info):
        yield item


@pytest.mark.parametrize("mode", ["inline", "durable"])
async def test_a_childs_approval_reaches_the_inbox_and_the_parent_waits_for_it(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]], mode: str
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
                mode=mode,  # type: ignore[arg-type]
                tools=("delegate", "send_email"),
            )
        )
        url = f"/api/v1/runs/{spec.run_id}/events"
        frames: list[Frame] = []
        while not any(f.data.get("name") == "approval_requested" for f in frames):
            frames = await read_events(http, url, headers, limit=len(frames) + 1)
        asked = next(f.data["value"] for f in frames if f.data.get("name") == "approval_requested")
        (child,) = run_rows(admin_url, spec.run_id)
        assert asked["child_run_id"] == str(child["id"]) and asked["tool"] == "send_email"
        inbox = (await http.get("/api/v1/approvals", headers=headers)).json()["items"]
        assert [a["id"] for a in inbox] == [asked["approval_id"]]
        view = (await http.get(f"/api/v1/runs/{spec.run_id}", headers=headers)).json()
        assert view["status"] == "waiting" and [c["status"] for c in view["children"]] == ["waiting"]
        assert email_tool == []
        decided = await http.post(
            f"/api/v1/approvals/{asked['approval_id']}", json={"decision": "approve"}, headers=headers
        )
        assert decided.status_code == 200, decided.text
        frames = await read_events(http, url, headers, timeout=60)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert email_tool == [{"to": "bob@example.com", "subject": "hi"}]
    answer = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert "Done: sent to bob@example.com" in answer
