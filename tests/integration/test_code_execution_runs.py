"""`run_python` in runs (in-process, the real engine, Postgres and the local sandbox; a scripted model): one session
per run keeps its variables between the run's calls and is gone when the run ends, every call's seconds are metered
to the org, and the tier gate keeps a conversation's data from a backend below its tier before any code runs."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from personal_agent.sandbox import sessions
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec
from personal_agent.tools.code_execution import run_python
from tests.auth import auth_headers
from tests.knowledge import post_file, register
from tests.members import colleague_of
from tests.runs import follow_approving, start_run
from tests.scripted import Script, scripted_model
from tests.sse import read_events

CELLS = ["total = 41", "total + 1", "import os\nos.getpid()"]


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]


async def three_cells(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """Runs the cells one call at a time, then answers with the second call's value."""
    done = _returns(messages)
    if len(done) < len(CELLS):
        args = json.dumps({"code": CELLS[len(done)]})
        yield {0: DeltaToolCall(name="run_python", json_args=args, tool_call_id=f"py_{len(done)}")}
    else:
        yield f"The answer is {done[1].content['value']}."


async def test_a_runs_calls_share_one_session_that_ends_with_the_run(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(three_cells) as (model, _):
        run = await start_run(http, headers, model, "add one to 41 in Python", chat_id=None)
        frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    answer = "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert answer == "The answer is 42."  # the second call saw the first call's variable
    assert sessions.open_sessions() == 0  # the run ended: its kernel with it

    view = (await http.get(f"/api/v1/runs/{run['run_id']}", headers=headers)).json()
    assert view["sandbox_seconds"] > 0
    usage = (await http.get("/api/v1/usage", headers=headers)).json()
    assert usage["sandbox_seconds"] == pytest.approx(view["sandbox_seconds"], abs=0.002)  # metered to its org
    other = auth_headers(make_tenant())  # another org's user: the run is not theirs, nor its seconds
    assert (await http.get(f"/api/v1/runs/{run['run_id']}", headers=other)).status_code == 404
    assert (await http.get("/api/v1/usage", headers=other)).json()["sandbox_seconds"] == 0


async def test_a_conversation_above_the_backends_tier_never_reaches_it(
    monkeypatch: pytest.MonkeyPatch, make_tenant: Any
) -> None:
    tenant = make_tenant()
    spec = RunSpec(
        run_id=uuid.uuid4(),
        org_id=tenant.org_id,
        user_id=tenant.user_id,
        chat_id=uuid.uuid4(),
        model="test",
        instructions="",
        mode="inline",
        routing_tier=2,  # a restricted conversation
    )
    ctx = RunContext(
        deps=RunDeps.for_run(spec, None), model=TestModel(), usage=RunUsage(), tool_call_id="call_1", messages=[]
    )
    below = sessions.config().model_copy(update={"tier": 1})
    monkeypatch.setattr(sessions, "config", lambda: below)
    opened: list[object] = []
    monkeypatch.setattr(sessions, "session_for", lambda *args: opened.append(args))
    with pytest.raises(ModelRetry) as refused:
        await run_python(ctx, "print('the restricted figures')")
    assert "needs trust tier 2" in refused.value.message and "tier 1" in refused.value.message
    assert opened == []  # no session was even opened


async def a_retry_then_done(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    retries = [
        p
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, RetryPromptPart | ToolReturnPart) and p.tool_name == "run_python"
    ]
    if not retries:
        args = json.dumps({"code": "1", "files": ["nowhere.csv"]})
        yield {0: DeltaToolCall(name="run_python", json_args=args, tool_call_id="py_0")}
    else:
        yield str(retries[0].content)


async def test_a_file_that_is_not_the_chats_is_a_correction_not_a_crash(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(a_retry_then_done) as (model, _):
        run = await start_run(http, headers, model, "analyse my file")
        frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1].data["message"]
    answer = "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert "'nowhere.csv' is not a file of this chat" in answer
    view = (await http.get(f"/api/v1/runs/{run['run_id']}", headers=headers)).json()
    assert view["sandbox_seconds"] == 0  # nothing ran


FIGURES = b"quarter,revenue\nQ1,10\nQ2,12\n"


def read_then_act(document_id: str) -> Script:
    """Reads a knowledge document in the sandbox, then calls the acting demo tool, then answers."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        done = len(_returns(messages))
        if done == 0:
            args = json.dumps({"code": "open('figures.csv').read()", "files": [document_id]})
            yield {0: DeltaToolCall(name="run_python", json_args=args, tool_call_id="py_0")}
        elif done == 1:
            args = json.dumps({"to": "finance", "text": "the figures"})
            yield {0: DeltaToolCall(name="send_demo_message", json_args=args, tool_call_id="act_0")}
        else:
            yield "Sent."

    return script


async def _reads_then_acts(
    http: httpx.AsyncClient, headers: dict[str, str], document_id: str
) -> tuple[list[Any], bool]:
    chat_id = (await http.post("/api/v1/chats", json={"title": "t"}, headers=headers)).json()["id"]
    with scripted_model(read_then_act(document_id)) as (model, _):
        body = {"message": "send finance the figures", "model": model, "mode": "inline"}
        body["tools"] = ["run_python", "send_demo_message"]
        started = (await http.post(f"/api/v1/chats/{chat_id}/runs", json=body, headers=headers)).json()
        return await follow_approving(http, started["events_url"], headers, lambda: None)


async def _document(http: httpx.AsyncClient, headers: dict[str, str]) -> str:
    created = await register(http, headers, "figures.csv", "text/csv", len(FIGURES), collection="org")
    assert (await asyncio.to_thread(post_file, created["upload"], FIGURES)).status_code in (200, 204)
    return str(created["document"]["id"])


async def test_a_colleagues_document_makes_the_result_untrusted_so_acting_asks_a_person(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    sure_router: str,  # noqa: F811 - the fixture
) -> None:
    alice = make_tenant(roles=("org-admin",))
    headers = auth_headers(alice, roles=("org-admin",))
    sure = {"tier_floor": 0, "confidence_threshold": 0.8, "routing_model": sure_router}  # the confidence gate passes
    assert (await http.put("/api/v1/admin/settings", headers=headers, json=sure)).status_code == 200
    own, theirs = await _document(http, headers), await _document(http, auth_headers(colleague_of(admin_url, alice)))

    frames, asked = await _reads_then_acts(http, headers, own)
    assert not asked and frames[-1].type == "RUN_FINISHED"  # her own document: the acting tool just runs
    frames, asked = await _reads_then_acts(http, headers, theirs)
    assert asked  # the colleague's document made the result untrusted: the acting tool waited for a person
    results = [f.data["content"] for f in frames if f.type == "TOOL_CALL_RESULT"]
    assert "Q1,10" in results[0]
