"""The platform as an MCP server: the official `mcp` client, with a personal access token, drives `/mcp`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from tests.auth import bearer
from tests.email_tool import email_script, launch_email_run
from tests.platform_mcp import mcp_session, personal_token
from tests.scripted import scripted_model
from tests.sse import read_events

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


async def _answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    yield "The answer "
    yield "is 42."


async def test_an_mcp_client_with_a_pat_starts_a_run_and_reads_its_answer(
    live_url: str, http: httpx.AsyncClient, make_tenant: Any
) -> None:
    token = await personal_token(http, make_tenant())
    with scripted_model(_answer) as (model_id, _):
        async with mcp_session(live_url, bearer(token)) as session:
            listed = await session.list_tools()
            assert {t.name for t in listed.tools} == {
                "start_run",
                "get_run",
                "list_chats",
                "list_agents",
                "search_knowledge",
            }

            started = await session.call_tool("start_run", {"message": "What is the answer?", "model": model_id})
            assert not started.is_error, started.content
            run = started.structured_content
            assert run is not None and run["model"] == model_id and run["status"] in ("queued", "running", "succeeded")

            frames = await read_events(http, f"/api/v1/runs/{run['run_id']}/events", bearer(token))
            assert frames[-1].type == "RUN_FINISHED"

            result = await session.call_tool("get_run", {"run_id": run["run_id"]})
            assert not result.is_error, result.content
            assert result.structured_content is not None
            got = result.structured_content
            assert (got["status"], got["answer"], got["error"]) == ("succeeded", "The answer is 42.", None)
            assert got["chat_id"] == run["chat_id"]

            chats = (await session.call_tool("list_chats", {"limit": 5})).structured_content
            assert chats is not None and [c["id"] for c in chats["chats"]] == [run["chat_id"]]
            assert chats["chats"][0]["title"] == "What is the answer?"

            # A follow-up turn in the same chat.
            again = await session.call_tool(
                "start_run", {"message": "And again?", "chat_id": run["chat_id"], "model": model_id, "mode": "inline"}
            )
            assert not again.is_error and again.structured_content is not None
            assert again.structured_content["chat_id"] == run["chat_id"]
            await read_events(http, f"/api/v1/runs/{again.structured_content['run_id']}/events", bearer(token))
            second = (
                await session.call_tool("get_run", {"run_id": again.structured_content["run_id"]})
            ).structured_content
            assert second is not None and (second["status"], second["answer"]) == ("succeeded", "The answer is 42.")


async def test_without_a_token_mcp_is_refused(live_url: str, http: httpx.AsyncClient) -> None:
    refused = await http.post("/mcp", json=INITIALIZE, headers={"Accept": "application/json, text/event-stream"})
    assert refused.status_code == 401
    assert refused.json()["code"] == "missing_token" and refused.json()["request_id"]
    bad = await http.post("/mcp", json=INITIALIZE, headers=bearer("pa_pat_" + "x" * 43))
    assert (bad.status_code, bad.json()["code"]) == (401, "unknown_token")

    statuses: list[int] = []
    with pytest.raises(ExceptionGroup) as caught:  # the official client cannot even initialize
        async with mcp_session(live_url, {}, statuses):
            pass
    assert caught.group_contains(MCPError) and statuses == [401]


async def test_another_orgs_run_and_chats_are_not_found(
    live_url: str, http: httpx.AsyncClient, make_tenant: Any
) -> None:
    owner, stranger = await personal_token(http, make_tenant()), await personal_token(http, make_tenant())
    with scripted_model(_answer) as (model_id, _):
        async with mcp_session(live_url, bearer(owner)) as session:
            started = await session.call_tool("start_run", {"message": "mine", "model": model_id})
            assert started.structured_content is not None
            run = started.structured_content
        await read_events(http, f"/api/v1/runs/{run['run_id']}/events", bearer(owner))

    async with mcp_session(live_url, bearer(stranger)) as session:
        foreign = await session.call_tool("get_run", {"run_id": run["run_id"]})
        assert foreign.is_error and "run_not_found" in str(foreign.content)
        into = await session.call_tool("start_run", {"message": "yours?", "chat_id": run["chat_id"]})
        assert into.is_error and "chat_not_found" in str(into.content)
        malformed = await session.call_tool("get_run", {"run_id": "not-a-uuid"})
        assert malformed.is_error and "run_not_found" in str(malformed.content)
        empty = await session.call_tool("start_run", {"message": "  "})
        assert empty.is_error and "empty_message" in str(empty.content)
        chats = (await session.call_tool("list_chats", {})).structured_content
        assert chats == {"chats": []}  # neither org A's chat nor one made for the refused message


async def test_start_run_into_a_busy_chat_is_queued_and_starts_once_the_chat_is_free(
    live_url: str, http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]]
) -> None:
    tenant = make_tenant()
    token = await personal_token(http, tenant)
    with scripted_model(email_script) as (busy_model, _), scripted_model(_answer) as (model_id, _):
        busy = await launch_email_run(http, tenant, busy_model)  # waits for a person to approve its e-mail
        frames: list[Any] = []
        while not any(f.data.get("name") == "approval_requested" for f in frames):
            frames = await read_events(http, f"/api/v1/runs/{busy.run_id}/events", bearer(token), limit=len(frames) + 1)
        approval = next(f.data["value"]["approval_id"] for f in frames if f.data.get("name") == "approval_requested")
        async with mcp_session(live_url, bearer(token)) as session:
            started = await session.call_tool(
                "start_run", {"message": "And then?", "chat_id": str(busy.chat_id), "model": model_id}
            )
            assert not started.is_error, started.content
            queued = started.structured_content
            assert queued is not None and queued["status"] == "queued"
            assert queued["chat_id"] == str(busy.chat_id) and queued["run_id"] != str(busy.run_id)
            waiting = (await http.get(f"/api/v1/chats/{busy.chat_id}/followups", headers=bearer(token))).json()
            assert [(f["run_id"], f["message"]) for f in waiting["items"]] == [(queued["run_id"], "And then?")]

            denied = await http.post(f"/api/v1/approvals/{approval}", json={"decision": "deny"}, headers=bearer(token))
            assert denied.status_code == 200, denied.text
            deadline = asyncio.get_running_loop().time() + 60
            while True:  # the busy run ends, then the queued message starts as the run `start_run` named
                got = await session.call_tool("get_run", {"run_id": queued["run_id"]})
                if not got.is_error:
                    break
                assert "run_not_found" in str(got.content)
                assert asyncio.get_running_loop().time() < deadline, got.content
                await asyncio.sleep(0.2)
            left = (await http.get(f"/api/v1/chats/{busy.chat_id}/followups", headers=bearer(token))).json()
    assert got.structured_content is not None and got.structured_content["chat_id"] == str(busy.chat_id)
    assert left["items"] == []  # started: no longer queued
    assert email_tool == []  # denied: the busy run never sent its e-mail
