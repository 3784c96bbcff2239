"""Durable runs: the real ASL executes in moto (lambda:invoke Tasks) and in LocalStack (activity Tasks), with the
steps handler in-process either way (`durable_aws`)."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import boto3
import httpx
import psycopg
import pytest
from psycopg.rows import dict_row
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.approvals import store as approval_store
from personal_agent.db import org_transaction
from personal_agent.lifecycle.durable_steps import RetryableStepError
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.runs import store as runs_store
from personal_agent.tools.registry import ToolDef, register_tool, unregister_tool
from tests import db_state
from tests.auth import auth_headers
from tests.email_tool import email_script, launch_email_run
from tests.emulators import Emulator
from tests.runs import start_run
from tests.scripted import scripted_model, text_then_tool
from tests.sfn import wait_for_execution
from tests.sse import Frame, read_events


def normalized(frames: list[Frame]) -> list[tuple[Any, ...]]:
    """An event sequence without ids and timestamps."""
    keep = ("delta", "toolCallName", "content", "stepName", "outcome", "name", "role")
    return [(f.type, *(f.data.get(k) for k in keep)) for f in frames]


def sfn() -> Any:
    return boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"])


def history(execution_arn: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    token = None
    while True:
        page = sfn().get_execution_history(executionArn=execution_arn, **({"nextToken": token} if token else {}))
        events += page["events"]
        token = page.get("nextToken")
        if not token:
            return events


async def execution_arn(http: httpx.AsyncClient, headers: dict[str, str], run_id: str, admin_url: str) -> str:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT execution_arn FROM runs WHERE id = %s", [run_id]).fetchone()
    assert row and row[0]
    return str(row[0])


async def test_inline_and_durable_give_the_same_event_sequence(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, durable_aws: Emulator
) -> None:
    headers = auth_headers(make_tenant())
    script = text_then_tool(rounds=2, tool="calculate", args='{"expression": "6*7"}')
    with scripted_model(script) as (model, _):
        inline = await start_run(http, headers, model)
        inline_frames = await read_events(http, inline["events_url"], headers)
        chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
        durable = await http.post(
            f"/api/v1/chats/{chat['id']}/runs",
            json={"message": "what time is it?", "model": model, "mode": "durable"},
            headers=headers,
        )
        assert durable.status_code == 202 and durable.json()["mode"] == "durable"
        durable_frames = await read_events(http, durable.json()["events_url"], headers)
    assert normalized(durable_frames) == normalized(inline_frames)
    assert durable_frames[-1].type == "RUN_FINISHED"
    arn = await execution_arn(http, headers, durable.json()["run_id"], admin_url)
    assert wait_for_execution(sfn(), arn)["status"] == "SUCCEEDED"
    status = (await http.get(durable.json()["status_url"], headers=headers)).json()
    assert (status["status"], status["mode"]) == ("succeeded", "durable")


@pytest.fixture
def flaky_tool() -> Iterator[dict[str, int]]:
    calls = {"n": 0}

    def flaky(value: str) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RetryableStepError("the database went away for a moment")
        return value.upper()

    register_tool(ToolDef("flaky", flaky, "Echo in capitals."))
    yield calls
    unregister_tool("flaky")


async def test_a_retried_step_resumes_from_its_checkpoint(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, flaky_tool: dict[str, int], durable_aws: Emulator
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    script = text_then_tool(rounds=1, tool="flaky", args='{"value": "ok"}')
    with scripted_model(script) as (model, recorder):
        spec = await launch_run(
            LaunchRequest(
                org_id=tenant.org_id,
                user_id=tenant.user_id,
                chat_id=chat["id"],
                message="go",
                model=model,
                mode="durable",
                tools=("flaky",),
            )
        )
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert flaky_tool["n"] == 2  # the tool failed once, the Task was retried, the tool ran again
    assert recorder.calls == [1, 3]  # the first model request was not sent again after the retry
    arn = await execution_arn(http, headers, str(spec.run_id), admin_url)
    events = history(arn)
    failed = {"moto": {"LambdaFunctionFailed", "TaskFailed"}, "localstack": {"ActivityFailed"}}[durable_aws.name]
    assert failed & {e["type"] for e in events}
    with psycopg.connect(admin_url) as conn:
        usage = conn.execute(
            "SELECT request_index FROM usage_records WHERE run_id = %s ORDER BY 1", [spec.run_id]
        ).fetchall()
    assert usage == [(0,), (1,)]


async def _wait_for_approval(
    http: httpx.AsyncClient, headers: dict[str, str], run_id: uuid.UUID, nth: int = 1
) -> Frame:
    """The run's `nth` approval_requested event, once it is on the stream."""
    frames: list[Frame] = []
    while sum(f.data.get("name") == "approval_requested" for f in frames) < nth:
        frames = await read_events(http, f"/api/v1/runs/{run_id}/events", headers, limit=len(frames) + 1)
    return [f for f in frames if f.data.get("name") == "approval_requested"][nth - 1]


async def test_approve_runs_the_tool_and_completes(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]], durable_aws: Emulator
) -> None:
    tenant, stranger = make_tenant(), make_tenant(roles=("admin",))
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model)
        assert spec.mode == "durable"  # auto: a tool that needs approval makes the run durable
        requested = await _wait_for_approval(http, headers, spec.run_id)
        approval_id = requested.data["value"]["approval_id"]
        assert requested.data["value"]["tool"] == "send_email"
        assert requested.data["value"]["args"] == {"to": "bob@example.com", "subject": "hi"}
        arn = await execution_arn(http, headers, str(spec.run_id), admin_url)
        assert sfn().describe_execution(executionArn=arn)["status"] == "RUNNING"
        assert email_tool == []
        pending = (await http.get("/api/v1/approvals", headers=headers)).json()["items"]
        assert [p["id"] for p in pending] == [approval_id]
        foreign = await http.post(
            f"/api/v1/approvals/{approval_id}",
            json={"decision": "approve"},
            headers=auth_headers(stranger, roles=("admin",)),
        )
        assert (foreign.status_code, foreign.json()["code"]) == (404, "approval_not_found")
        decided = await http.post(
            f"/api/v1/approvals/{approval_id}", json={"decision": "approve", "reason": "ok"}, headers=headers
        )
        assert decided.status_code == 200 and decided.json()["status"] == "approved"
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert email_tool == [{"to": "bob@example.com", "subject": "hi"}]
    text = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert text == "Done: sent to bob@example.com"
    again = await http.post(f"/api/v1/approvals/{approval_id}", json={"decision": "deny"}, headers=headers)
    assert (again.status_code, again.json()["code"]) == (409, "approval_already_decided")
    assert wait_for_execution(sfn(), arn)["status"] == "SUCCEEDED"
    with psycopg.connect(admin_url) as conn:
        audit = conn.execute(
            "SELECT action, actor_id FROM approval_audit WHERE approval_id = %s ORDER BY id", [approval_id]
        ).fetchall()
    assert audit == [("requested", None), ("approved", tenant.user_id)]


async def test_deny_returns_the_denial_to_the_model(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]], durable_aws: Emulator
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model)
        requested = await _wait_for_approval(http, headers, spec.run_id)
        approval_id = requested.data["value"]["approval_id"]
        denied = await http.post(
            f"/api/v1/approvals/{approval_id}", json={"decision": "deny", "reason": "not now"}, headers=headers
        )
        assert denied.status_code == 200 and denied.json()["status"] == "denied"
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
    assert email_tool == []
    text = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert text == "Done: The tool call was not approved: not now."
    assert frames[-1].type == "RUN_FINISHED"


async def test_an_expired_approval_resolves_as_denied(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]], durable_aws: Emulator
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model, approval_timeout_seconds=1)
        requested = await _wait_for_approval(http, headers, spec.run_id)
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
    assert email_tool == []
    text = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert "not approved" in text and "timed out" in text
    late = await http.post(
        f"/api/v1/approvals/{requested.data['value']['approval_id']}", json={"decision": "approve"}, headers=headers
    )
    assert late.status_code == 409
    arn = await execution_arn(http, headers, str(spec.run_id), admin_url)
    assert "ApprovalTimedOut" in {e.get("stateEnteredEventDetails", {}).get("name") for e in history(arn)}


async def test_cancel_stops_a_waiting_durable_run(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]], durable_aws: Emulator
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model)
        await _wait_for_approval(http, headers, spec.run_id)
        arn = await execution_arn(http, headers, str(spec.run_id), admin_url)
        # The approval is on the stream a moment before the execution's WaitForApproval Task stores its token.
        await _stored_task_token(admin_url, spec.run_id, take=False)
        cancelled = await http.post(f"/api/v1/runs/{spec.run_id}/cancel", headers=headers)
        assert cancelled.status_code == 202
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "cancelled"}
    # The waiting Task fails with `Cancelled`, which its Catch sends to Done: the same ending on every platform.
    assert wait_for_execution(sfn(), arn)["status"] == "SUCCEEDED"
    entered = [e["stateEnteredEventDetails"]["name"] for e in history(arn) if "stateEnteredEventDetails" in e]
    assert entered[-2:] == ["WaitForApproval", "Done"]
    assert (await http.get(f"/api/v1/runs/{spec.run_id}", headers=headers)).json()["status"] == "cancelled"


# Tells a listening test that a Task stored its callback token (the test database only; nothing in the product
# announces it). Idempotent, so every test that waits may create it.
TOKEN_STORED = """
CREATE OR REPLACE FUNCTION pa_test_token_stored() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('pa_test_token_stored', NEW.run_id::text); RETURN NEW; END $$;
CREATE OR REPLACE TRIGGER pa_test_token_stored AFTER INSERT OR UPDATE OF task_token ON approvals
FOR EACH ROW WHEN (NEW.task_token IS NOT NULL) EXECUTE FUNCTION pa_test_token_stored();
"""


async def _stored_task_token(admin_url: str, run_id: uuid.UUID, take: bool = True, timeout: float = 30.0) -> str:
    """The token the WaitForApproval Task stored for the run, once it is stored (woken by a notification from
    the approvals table); `take` removes it from the database as a cancel does (the approvals store's own take)."""
    read_it = "SELECT task_token FROM approvals WHERE run_id = %s AND task_token IS NOT NULL"
    async with await psycopg.AsyncConnection.connect(admin_url, autocommit=True, row_factory=dict_row) as conn:
        await conn.execute(TOKEN_STORED)
        await conn.execute("LISTEN pa_test_token_stored")  # before the first look: no store can fall between

        async def stored() -> str | None:
            if take:
                return next(iter(await approval_store.take_task_tokens(conn, run_id)), None)
            row = await (await conn.execute(read_it, [run_id])).fetchone()
            return str(row["task_token"]) if row else None

        token = await stored()
        deadline = asyncio.get_running_loop().time() + timeout
        while token is None:
            remaining = deadline - asyncio.get_running_loop().time()
            assert remaining > 0, "the WaitForApproval Task never stored its token"
            async for _ in conn.notifies(timeout=remaining, stop_after=1):
                pass
            token = await stored()
        return token


async def test_a_wait_that_begins_after_the_cancel_ends_at_once(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]], durable_aws: Emulator
) -> None:
    """A cancel takes the tokens of the Tasks already waiting; a Task whose step stores its token only after the
    cancel (the step was still running) must not wait out the approval timeout: it fails itself (`Cancelled`)."""
    from personal_agent.lifecycle.approval_decisions import store_task_token

    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model)
        await _wait_for_approval(http, headers, spec.run_id)
        arn = await execution_arn(http, headers, str(spec.run_id), admin_url)
        token = await _stored_task_token(admin_url, spec.run_id)  # as if the step had not stored it yet
        async with org_transaction(spec.org_id) as conn:
            await runs_store.request_cancel(conn, spec.run_id)
        await store_task_token(spec.org_id, spec.run_id, token)  # the late step
        final = wait_for_execution(sfn(), arn)
    assert final["status"] == "SUCCEEDED"  # the Catch of `Cancelled` goes to Done
    entered = [e["stateEnteredEventDetails"]["name"] for e in history(arn) if "stateEnteredEventDetails" in e]
    assert entered[-1] == "Done" and "RecordFailure" not in entered
    with psycopg.connect(admin_url) as conn:
        stored = conn.execute(
            "SELECT count(*) FROM approvals WHERE run_id = %s AND task_token IS NOT NULL", [spec.run_id]
        ).fetchone()
    assert stored == (0,)


@pytest.mark.parametrize("rounds", [0, 1, 3])
async def test_execution_history_is_small_content_free_and_cheap(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, rounds: int, durable_aws: Emulator
) -> None:
    headers = auth_headers(make_tenant())
    secret_text = "the quarterly numbers are confidential"
    with scripted_model(text_then_tool(rounds=rounds, tool="calculate", args='{"expression": "1+1"}')) as (model, _):
        chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
        started = (
            await http.post(
                f"/api/v1/chats/{chat['id']}/runs",
                headers=headers,
                json={"message": secret_text, "model": model, "mode": "durable"},
            )
        ).json()
        await read_events(http, started["events_url"], headers)
    arn = await execution_arn(http, headers, started["run_id"], admin_url)
    assert wait_for_execution(sfn(), arn)["status"] == "SUCCEEDED"
    events = history(arn)
    payloads = [json.dumps(e[k]) for e in events for k in e if k.endswith("EventDetails")]
    assert payloads and max(len(p) for p in payloads) < 2048
    assert not any(secret_text in p or "noon" in p or "Checking" in p for p in payloads)
    entered = [e for e in events if e["type"].endswith("StateEntered")]
    print(f"state transitions for a turn with {rounds} tool rounds: {len(entered)}")
    assert len(entered) <= 4


async def test_a_deny_policy_denies_without_waiting(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]], durable_aws: Emulator
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model, approval_policy="deny")
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
    assert email_tool == []
    text = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert text == "Done: The tool call was not approved: the workflow denies actions that need approval."
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}


async def test_an_expired_inline_approval_resolves_when_someone_answers_late(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]]
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model, mode="inline")
        requested = await _wait_for_approval(http, headers, spec.run_id)
        db_state.expire_approval_wait(admin_url, spec.run_id)
        late = await http.post(
            f"/api/v1/approvals/{requested.data['value']['approval_id']}", json={"decision": "approve"}, headers=headers
        )
        assert (late.status_code, late.json()["code"]) == (409, "approval_expired")
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
    assert email_tool == []
    assert "timed out" in "".join(f.data.get("delta", "") for f in frames)
    assert frames[-1].type == "RUN_FINISHED"


async def test_a_step_that_spends_its_time_budget_hands_back_and_the_next_continues(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, durable_aws: Emulator
) -> None:
    from personal_agent.settings import get_settings

    headers = auth_headers(make_tenant())
    script = text_then_tool(rounds=2, tool="calculate", args='{"expression": "2*3"}')
    settings = get_settings()
    original = settings.step_time_budget_seconds
    with scripted_model(script) as (model, recorder):
        inline = await start_run(http, headers, model)
        inline_frames = await read_events(http, inline["events_url"], headers)
        settings.step_time_budget_seconds = 0.000001  # every Task hands back after one node
        try:
            chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
            durable = (
                await http.post(
                    f"/api/v1/chats/{chat['id']}/runs",
                    headers=headers,
                    json={"message": "what time is it?", "model": model, "mode": "durable"},
                )
            ).json()
            durable_frames = await read_events(http, durable["events_url"], headers)
        finally:
            settings.step_time_budget_seconds = original
    assert normalized(durable_frames) == normalized(inline_frames)
    assert len(recorder.calls) == 6  # three requests each way: no request was sent twice across Tasks
    arn = await execution_arn(http, headers, durable["run_id"], admin_url)
    assert wait_for_execution(sfn(), arn)["status"] == "SUCCEEDED"
    advances = [e for e in history(arn) if e.get("stateEnteredEventDetails", {}).get("name") == "Advance"]
    assert len(advances) >= 4


async def test_a_retry_after_the_final_answer_is_stored_does_not_ask_again(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(text_then_tool(rounds=0)) as (model, recorder):
        run = await start_run(http, headers, model)
        await read_events(http, run["events_url"], headers)
        db_state.mark_running_again(admin_url, run["run_id"])  # as if the Task died before finishing
        db_state.drop_final_response(admin_url, run["run_id"])
        from personal_agent.engine.runner import advance

        assert (await advance(uuid.UUID(run["run_id"]), tenant.org_id)).status == "succeeded"
    assert len(recorder.calls) == 1
    transcript = (await http.get(f"/api/v1/chats/{run['chat_id']}/messages", headers=headers)).json()["items"]
    assert transcript[-1]["text"] == "It is noon."


async def test_a_run_whose_driver_is_unreachable_is_failed_not_left_queued(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    from personal_agent.settings import get_settings

    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    settings = get_settings()
    original = settings.state_machine_arn
    settings.state_machine_arn = "arn:aws:states:us-east-1:123456789012:stateMachine:does-not-exist"
    try:
        with scripted_model(text_then_tool(rounds=0)) as (model, recorder):
            refused = await http.post(
                f"/api/v1/chats/{chat['id']}/runs",
                headers=headers,
                json={"message": "hi", "model": model, "mode": "durable"},
            )
    finally:
        settings.state_machine_arn = original
    assert (refused.status_code, refused.json()["code"]) == (503, "driver_unavailable")
    assert recorder.calls == []
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute("SELECT status, error->>'code' FROM runs WHERE org_id = %s", [tenant.org_id]).fetchall()
    assert rows == [("failed", "driver_unavailable")]


async def test_a_tool_call_id_reused_in_the_next_round_gets_its_own_approval(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]]
) -> None:
    """Some OpenAI-compatible servers number calls per response (`call_0` every time): each round's call
    is approved on its own and the run does not wait forever on the first round's decided approval."""

    async def reused_ids(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        rounds = sum(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts)
        if rounds < 2:
            args = json.dumps({"to": f"person{rounds}@example.com", "subject": "hi"})
            yield {0: DeltaToolCall(name="send_email", json_args=args, tool_call_id="call_0")}
        else:
            yield "Both sent."

    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(reused_ids) as (model, _):
        spec = await launch_email_run(http, tenant, model, mode="inline")
        for round_no in range(2):
            requested = (await _wait_for_approval(http, headers, spec.run_id, nth=round_no + 1)).data["value"]
            assert requested["args"]["to"] == f"person{round_no}@example.com"
            decided = await http.post(
                f"/api/v1/approvals/{requested['approval_id']}", json={"decision": "approve"}, headers=headers
            )
            assert decided.status_code == 200, decided.text
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
        while frames[-1].type != "RUN_FINISHED" or frames[-1].data["outcome"]["type"] == "interrupt":
            frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers, limit=len(frames) + 1)
    run = (await http.get(f"/api/v1/runs/{spec.run_id}", headers=headers)).json()
    assert run["status"] == "succeeded"
    assert [s["to"] for s in email_tool] == ["person0@example.com", "person1@example.com"]
