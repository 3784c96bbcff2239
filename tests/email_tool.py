"""A tool that needs approval before it acts (`send_email`), a script that calls it once then answers, and a run
of that script started as the web chat starts one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.spec.run_spec import RunSpec
from tests.auth import auth_headers


async def email_script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    if not returns:
        yield {
            0: DeltaToolCall(
                name="send_email", json_args='{"to": "bob@example.com", "subject": "hi"}', tool_call_id="mail_1"
            )
        }
    else:
        yield f"Done: {returns[-1].content}"


async def launch_email_run(http: httpx.AsyncClient, tenant: Any, model: str, **extra: Any) -> RunSpec:
    """A run in a new chat of `tenant`'s that asks to e-mail bob with `send_email` (`model`: `email_script`)."""
    chat = (await http.post("/api/v1/chats", json={}, headers=auth_headers(tenant))).json()
    request = LaunchRequest(
        org_id=tenant.org_id,
        user_id=tenant.user_id,
        chat_id=chat["id"],
        message="email bob",
        model=model,
        tools=("send_email",),
        **extra,
    )
    return await launch_run(request)
