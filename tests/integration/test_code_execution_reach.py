"""What `run_python` may reach and what it asks (in-process, the real engine, Postgres and the local sandbox; a
scripted model): a knowledge document id of another org, or a file sent in another chat of the same user, is the
tool's correction and no code runs (no sandbox seconds); and the tool needs no person's approval (it acts on
nothing outside its sandbox): under the default rules an inline run calls it and finishes with no approval asked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.tools.registry import get_tool
from tests.auth import auth_headers
from tests.knowledge import post_file, register
from tests.runs import start_run
from tests.scripted import Script, scripted_model
from tests.sse import Frame, read_events

FIGURES = b"quarter,revenue\nQ1,10\nQ2,12\n"


def one_call(args: dict[str, Any]) -> Script:
    """Calls run_python once with `args`, then answers with what came back (the result, or the correction)."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        back = [
            p
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, RetryPromptPart | ToolReturnPart) and p.tool_name == "run_python"
        ]
        if not back:
            yield {0: DeltaToolCall(name="run_python", json_args=json.dumps(args), tool_call_id="py_0")}
        else:
            yield json.dumps(back[0].content) if isinstance(back[0], ToolReturnPart) else str(back[0].content)

    return script


async def _run(
    http: httpx.AsyncClient, headers: dict[str, str], args: dict[str, Any], chat_id: str | None = None
) -> tuple[list[Frame], dict[str, Any]]:
    with scripted_model(one_call(args)) as (model, _):
        run = await start_run(http, headers, model, "run it", chat_id=chat_id)
        frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    return frames, (await http.get(f"/api/v1/runs/{run['run_id']}", headers=headers)).json()


def _answer(frames: list[Frame]) -> str:
    return "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT")


async def test_another_orgs_knowledge_document_is_refused_and_nothing_runs(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    owner = auth_headers(make_tenant())
    created = await register(http, owner, "figures.csv", "text/csv", len(FIGURES), collection="org")
    assert (await asyncio.to_thread(post_file, created["upload"], FIGURES)).status_code in (200, 204)
    other_org = auth_headers(make_tenant())
    code = "open('/tmp/ran', 'w').write('x')\nopen('figures.csv').read()"
    frames, view = await _run(http, other_org, {"code": code, "files": [created["document"]["id"]]})
    answer = _answer(frames)
    assert "document not found" in answer and "Q1,10" not in answer, answer
    assert view["sandbox_seconds"] == 0  # refused before a session was opened


async def test_a_file_sent_in_another_chat_is_refused_and_nothing_runs(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    headers = auth_headers(make_tenant())
    first = (await http.post("/api/v1/chats", json={"title": "sales"}, headers=headers)).json()["id"]
    body = {"filename": "sales.csv", "content_type": "text/csv", "size": len(FIGURES)}
    created = (await http.post(f"/api/v1/chats/{first}/attachments", json=body, headers=headers)).json()
    assert (await asyncio.to_thread(post_file, created["upload"], FIGURES)).status_code in (200, 201, 204)
    with scripted_model(_says("noted")) as (model, _):
        sent = {"message": "my sales", "model": model, "mode": "inline", "attachments": [created["id"]]}
        started = (await http.post(f"/api/v1/chats/{first}/runs", json=sent, headers=headers)).json()
        assert (await read_events(http, started["events_url"], headers))[-1].type == "RUN_FINISHED"
    # The file is the first chat's: read there it runs (the control), named in another chat it is refused.
    control, _ = await _run(http, headers, {"code": "open('sales.csv').read()", "files": ["sales.csv"]}, first)
    assert "Q1,10" in _answer(control)
    frames, view = await _run(http, headers, {"code": "open('sales.csv').read()", "files": ["sales.csv"]})
    answer = _answer(frames)
    assert "'sales.csv' is not a file of this chat" in answer and "Q1,10" not in answer, answer
    assert view["sandbox_seconds"] == 0


def _says(text: str) -> Script:
    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        yield text

    return script


async def test_run_python_needs_no_approval(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tool = get_tool("run_python")
    assert tool is not None and tool.acts is False and tool.requires_approval is False
    headers = auth_headers(make_tenant())  # the org's default rules
    frames, view = await _run(http, headers, {"code": "6 * 7"})
    assert not [f for f in frames if f.data.get("name") == "approval_requested"]
    assert [f for f in frames if f.type == "TOOL_CALL_RESULT"]
    assert json.loads(_answer(frames))["value"] == "42"
    assert view["status"] == "succeeded" and view["sandbox_seconds"] > 0
