"""Headless runs: nobody is watching a webhook's run, so approvals follow the workflow's policy, and a run
over budget is not started but recorded as skipped."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import boto3
import httpx

from tests.auth import auth_headers
from tests.email_tool import email_script
from tests.scripted import scripted_model
from tests.sfn import wait_for_execution
from tests.sse import Frame, read_events
from tests.workflows import create_workflow, db_rows, sign, text_of


def states_entered(execution_arn: str) -> list[str]:
    client = boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
    wait_for_execution(client, execution_arn)
    events = client.get_execution_history(executionArn=execution_arn, maxResults=1000)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]


async def run_to_end(http: httpx.AsyncClient, headers: dict[str, str], run_id: str) -> list[Frame]:
    """The run's events until it really ends (an approval interrupt is not the end)."""
    frames: list[Frame] = []
    while not frames or frames[-1].data.get("outcome", {}).get("type") == "interrupt":
        frames = await read_events(http, f"/api/v1/runs/{run_id}/events", headers)
    return frames


async def _webhook_run(http: httpx.AsyncClient, tenant: Any, **fields: Any) -> tuple[dict[str, Any], str]:
    workflow = await create_workflow(http, auth_headers(tenant), tools=["send_email"], **fields)
    response = await http.post(
        f"/api/v1/hooks/{workflow['id']}",
        content=b'{"to": "bob"}',
        headers=sign(workflow["signing_secret"], b'{"to": "bob"}'),
    )
    assert response.status_code == 202, response.text
    return workflow, response.json()["run_id"]


async def test_a_headless_run_waits_for_approval_then_resolves_as_denied_when_the_wait_times_out(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]]
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        workflow, run_id = await _webhook_run(
            http, tenant, model=model, approval_policy="wait", approval_timeout_seconds=1
        )
        frames = await run_to_end(http, headers, run_id)

    requested = [f for f in frames if f.data.get("name") == "approval_requested"]
    assert len(requested) == 1 and requested[0].data["value"]["tool"] == "send_email"
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert "not approved" in text_of(frames) and "timed out" in text_of(frames)
    assert email_tool == []  # the owner never decided, so the tool never ran
    audit = db_rows(
        admin_url,
        "SELECT a.action, p.owner_id FROM approval_audit a JOIN approvals p ON p.id = a.approval_id"
        " WHERE p.run_id = %s ORDER BY a.id",
        run_id,
    )
    assert audit == [("requested", tenant.user_id), ("expired", tenant.user_id)]  # it went to the owner's inbox
    (arn,) = db_rows(admin_url, "SELECT execution_arn FROM runs WHERE id = %s", run_id)[0]
    entered = await asyncio.to_thread(states_entered, arn)
    assert entered.index("WaitForApproval") < entered.index("ApprovalTimedOut")
    status = (await http.get(f"/api/v1/runs/{run_id}", headers=headers)).json()
    assert (status["status"], status["trigger_source"]) == ("succeeded", "webhook")


async def test_a_headless_run_whose_workflow_denies_approvals_does_not_wait(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]]
) -> None:
    tenant = make_tenant()
    with scripted_model(email_script) as (model, _):
        # An hour-long wait would outlast the test: the deny policy must not wait at all.
        _, run_id = await _webhook_run(http, tenant, model=model, approval_policy="deny", approval_timeout_seconds=3600)
        frames = await run_to_end(http, auth_headers(tenant), run_id)

    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert email_tool == [] and "the workflow denies actions that need approval" in text_of(frames)
    audit = db_rows(
        admin_url,
        "SELECT a.action FROM approval_audit a JOIN approvals p ON p.id = a.approval_id WHERE p.run_id = %s"
        " ORDER BY a.id",
        run_id,
    )
    assert audit == [("requested",), ("denied",)]
    (arn,) = db_rows(admin_url, "SELECT execution_arn FROM runs WHERE id = %s", run_id)[0]
    entered = await asyncio.to_thread(states_entered, arn)
    assert "WaitForApproval" not in entered and "ApprovalTimedOut" not in entered


async def test_a_triggered_run_over_budget_is_not_started_but_recorded_as_skipped(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    workflow = await create_workflow(http, headers)
    db_rows(
        admin_url,
        "INSERT INTO budgets (org_id, scope, monthly_usd) VALUES (%s, 'org', 0) RETURNING id",
        tenant.org_id,
    )
    connected = asyncio.Event()
    feed = asyncio.create_task(read_events(http, "/api/v1/feed", headers, limit=1, connected=connected, timeout=60))
    await connected.wait()
    body = b'{"nightly": true}'
    sent = sign(workflow["signing_secret"], body)

    response = await http.post(f"/api/v1/hooks/{workflow['id']}", content=body, headers=sent)
    again = await http.post(f"/api/v1/hooks/{workflow['id']}", content=body, headers=sent)

    assert response.status_code == 202, response.text
    skipped = response.json()
    assert skipped["status"] == "skipped" and again.json() == {**skipped, "duplicate": True}
    run = (await http.get(skipped["status_url"], headers=headers)).json()
    assert (run["status"], run["trigger_source"], run["error"]["code"]) == ("skipped", "webhook", "budget_exceeded")
    assert db_rows(admin_url, "SELECT execution_arn, started_at FROM runs WHERE id = %s", skipped["run_id"]) == [
        (None, None)
    ]
    assert db_rows(admin_url, "SELECT count(*) FROM messages WHERE chat_id = %s", workflow["chat_id"]) == [(0,)]
    (announced,) = await asyncio.wait_for(feed, 30)
    assert (announced.data["name"], announced.data["value"]["run_id"]) == ("run_skipped", skipped["run_id"])
    history = (await http.get(f"/api/v1/workflows/{workflow['id']}/runs", headers=headers)).json()["items"]
    assert [(h["run_id"], h["status"], h["error"]["code"]) for h in history] == [
        (skipped["run_id"], "skipped", "budget_exceeded")
    ]
