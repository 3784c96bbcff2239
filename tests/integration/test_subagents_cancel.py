"""Cancelling a parent cancels every child within a second (inline and durable), and a durable parent waiting on
its children holds no Lambda: its execution sits in the `WaitForChildren` task-token wait."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import httpx
import psycopg

from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.spec.run_spec import RunSpec
from tests.auth import auth_headers
from tests.scripted import scripted_model
from tests.sfn import wait_for_execution
from tests.sse import Frame, read_events
from tests.subagents import delegating, run_rows, sleepers


def sfn() -> Any:
    return boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"])


async def _launch(http: httpx.AsyncClient, tenant: Any, model: str, mode: str) -> RunSpec:
    chat = (await http.post("/api/v1/chats", json={}, headers=auth_headers(tenant))).json()
    return await launch_run(
        LaunchRequest(
            org_id=tenant.org_id,
            user_id=tenant.user_id,
            chat_id=chat["id"],
            message="split this in three",
            model=model,
            mode=mode,  # type: ignore[arg-type]
            tools=("delegate",),
        )
    )


async def _until(http: httpx.AsyncClient, url: str, headers: dict[str, str], found: Any) -> list[Frame]:
    """Read a stream until a frame matches `found` (the signal a test waits on)."""
    frames: list[Frame] = []
    while not any(found(f) for f in frames):
        frames = await read_events(http, url, headers, limit=len(frames) + 1)
    return frames


async def _children_streaming(http: httpx.AsyncClient, headers: dict[str, str], run_id: Any) -> list[dict[str, Any]]:
    """The three children, once each is streaming its answer."""
    frames = await _until(
        http,
        f"/api/v1/runs/{run_id}/events",
        headers,
        lambda f: f.data.get("name") == "subagent_started" and f.data["value"]["tool_call_id"] == "d2",
    )
    started = [f.data["value"] for f in frames if f.data.get("name") == "subagent_started"]
    for child in started:
        await _until(http, child["events_url"], headers, lambda f: f.type == "TEXT_MESSAGE_CONTENT")
    return started


async def _cancel_and_check(
    http: httpx.AsyncClient, headers: dict[str, str], admin_url: str, spec: RunSpec, started: list[dict[str, Any]]
) -> None:
    asked = datetime.now(UTC)
    cancelled = await http.post(f"/api/v1/runs/{spec.run_id}/cancel", headers=headers)
    assert cancelled.status_code == 202 and cancelled.json()["cancelled"] is True
    for child in started:  # the real signal: each child's own stream ends, cancelled
        ended = (await read_events(http, child["events_url"], headers))[-1]
        assert ended.type == "RUN_FINISHED" and ended.data["outcome"] == {"type": "cancelled"}
    parent = (await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers))[-1]
    assert parent.data["outcome"] == {"type": "cancelled"}
    children = run_rows(admin_url, spec.run_id)
    assert [c["status"] for c in children] == ["cancelled"] * 3
    assert all(c["finished_at"] - asked < timedelta(seconds=1) for c in children)  # their own records


async def test_cancelling_an_inline_parent_cancels_every_child_within_a_second(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(delegating(sleepers(30, 30, 30))) as (model, _):
        spec = await _launch(http, tenant, model, "inline")
        started = await _children_streaming(http, headers, spec.run_id)
        await _cancel_and_check(http, headers, admin_url, spec, started)


def _execution_arn(admin_url: str, run_id: Any) -> str:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT execution_arn FROM runs WHERE id = %s", [str(run_id)]).fetchone()
    assert row and row[0]
    return str(row[0])


async def test_a_durable_parent_waits_on_its_children_without_a_lambda_and_its_cancel_cascades(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(delegating(sleepers(30, 30, 30))) as (model, _):
        spec = await _launch(http, tenant, model, "durable")
        started = await _children_streaming(http, headers, spec.run_id)
        arn = _execution_arn(admin_url, spec.run_id)
        events = sfn().get_execution_history(executionArn=arn)["events"]
        assert sfn().describe_execution(executionArn=arn)["status"] == "RUNNING"
        entered = [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]
        assert entered[-1] == "WaitForChildren"
        # Its Lambda returned at once (TaskSubmitted): the execution only holds a task token while children run.
        last = events[-1]
        assert last["type"] == "TaskSubmitted"
        assert last["taskSubmittedEventDetails"]["resource"] == "invoke.waitForTaskToken"
        started_tasks = sum(e["type"] == "TaskStarted" for e in events)
        returned = sum(e["type"] in ("TaskSucceeded", "TaskSubmitted", "TaskFailed") for e in events)
        assert started_tasks == returned  # no invocation of the parent's is in flight
        children_arns = [_execution_arn(admin_url, c["child_run_id"]) for c in started]
        assert all(sfn().describe_execution(executionArn=a)["status"] == "RUNNING" for a in children_arns)
        await _cancel_and_check(http, headers, admin_url, spec, started)
    # The parent's WaitForChildren Task fails with `Cancelled` (its Catch goes to Done), on every platform.
    assert wait_for_execution(sfn(), arn)["status"] == "SUCCEEDED"
    for execution in children_arns:
        final = wait_for_execution(sfn(), execution)
        # A child whose engine step runs is stopped (AWS aborts it; moto may end it with the step's `Cancelled`);
        # a waiting child's Task fails with `Cancelled`. Never through RecordFailure: nothing failed.
        assert final["status"] == "ABORTED" or final.get("error") == "Cancelled" or final["status"] == "SUCCEEDED"
