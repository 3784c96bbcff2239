"""`run_python` in runs (in-process, the real engine, Postgres and the local sandbox; a scripted model): one session
per run keeps its variables between the run's calls and is gone when the run ends, every call's seconds are metered
to the org, and the tier gate keeps a conversation's data from a backend below its tier before any code runs. The
result stays under the run's result size cap, files past the per-call count are named rather than returned, and a
knowledge document some model of the run may not receive never reaches the sandbox."""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import boto3
import httpx
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber
from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from personal_agent import aws_clients
from personal_agent.mcp_servers.toolsets import MAX_RESULT_CHARS
from personal_agent.models.catalog import register_model, unregister_model
from personal_agent.sandbox import sessions
from personal_agent.sandbox.lambda_backend import LambdaBackend
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


async def _answer(
    http: httpx.AsyncClient, headers: dict[str, str], args: dict[str, Any], tier: int = 2
) -> tuple[str, dict[str, Any]]:
    """The run's answer (what the model got back) and the run's view; the model's provider is of trust `tier`."""
    model = f"test:{uuid.uuid4().hex[:8]}"
    register_model(model, lambda: FunctionModel(stream_function=one_call(args), model_name="scripted"), tier=tier)
    try:
        run = await start_run(http, headers, model, "run it")
        frames = await read_events(http, run["events_url"], headers)
    finally:
        unregister_model(model)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    answer = "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    return answer, (await http.get(f"/api/v1/runs/{run['run_id']}", headers=headers)).json()


async def test_a_result_past_the_result_size_cap_is_cut_to_fit(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    # 20,000 control characters kept of stdout: 6 characters each once JSON-escaped, past the cap on their own.
    code = "import sys\nprint('\\x01' * 30000)\nsys.stderr.write('warn')\n'done'"
    answer, _ = await _answer(http, headers, {"code": code})
    result = json.loads(answer)
    assert len(json.dumps(result)) <= MAX_RESULT_CHARS
    assert result["stdout"].endswith("[… cut off: the result size cap]")
    assert (result["stderr"], result["value"], result["error"]) == ("warn", "'done'", None)  # stdout cut first


async def test_files_past_the_count_cap_are_named_not_returned(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    limit = sessions.config().limits.max_files
    code = f"for i in range({limit + 2}):\n    open(f'part_{{i:02}}.txt', 'w').write(str(i))"
    answer, _ = await _answer(http, headers, {"code": code})
    result = json.loads(answer)
    saved = sorted(f["filename"] for f in result["files"])
    assert saved == [f"part_{i:02}.txt" for i in range(limit)]  # stored as the chat's attachments
    assert result["files_left_out"] == [f"part_{i:02}.txt" for i in range(limit, limit + 2)]


async def test_a_document_some_model_of_the_run_may_not_receive_is_refused(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    headers = auth_headers(make_tenant())
    created = await register(
        http, headers, "plan.csv", "text/csv", len(FIGURES), collection="personal", classification="confidential"
    )
    assert (await asyncio.to_thread(post_file, created["upload"], FIGURES)).status_code in (200, 204)
    args = {"code": "open('plan.csv').read()", "files": [created["document"]["id"]]}
    answer, view = await _answer(http, headers, args, tier=0)  # a provider trusted with standard data only
    assert "plan.csv is classified above what this conversation's models may receive" in answer
    assert view["sandbox_seconds"] == 0  # refused before any code ran: its bytes never reached the sandbox


async def test_a_failed_sandbox_invocation_is_the_tools_error_not_the_runs(
    http: httpx.AsyncClient, make_tenant: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The AWS backend, its function failing (Lambda's timeout): a real Lambda client behind botocore's Stubber.
    client = boto3.client("lambda", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    real = aws_clients.aws_client
    monkeypatch.setattr(aws_clients, "aws_client", lambda s, **o: client if s == "lambda" else real(s, **o))
    monkeypatch.setattr(sessions, "backend", lambda: LambdaBackend("stack-sandbox", sessions.config().limits))
    crashed = json.dumps({"errorType": "Sandbox.Timedout", "errorMessage": "Task timed out after 60.00 seconds"})
    payload = StreamingBody(io.BytesIO(crashed.encode()), len(crashed))
    headers = auth_headers(make_tenant())
    with Stubber(client) as stubber:
        stubber.add_response("invoke", {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": payload})
        answer, view = await _answer(http, headers, {"code": "1 + 1"})  # the run finished: no exception escaped
        stubber.assert_no_pending_responses()
    result = json.loads(answer)
    assert "the sandbox function failed: Sandbox.Timedout: Task timed out" in result["error"]
    assert result["value"] is None and view["status"] == "succeeded"
