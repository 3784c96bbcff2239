"""Schedules: EventBridge Scheduler schedules managed through the workflow API (moto), the triggers function
as Scheduler invokes it, and the dev server's local scheduler firing due schedules exactly once."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import httpx
import pytest

from personal_agent.local.aws import function_arn
from personal_agent.local.scheduler import LocalScheduler
from personal_agent.settings import get_settings
from personal_agent.workflows.schedules import schedule_name
from personal_agent.workflows.triggers import time_key
from tests.auth import auth_headers
from tests.lambda_context import FakeLambdaContext, load_event
from tests.sse import read_events
from tests.workflows import create_workflow, db_rows, sign, text_of


def scheduler() -> Any:
    return boto3.client("scheduler", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")


def aws_schedule(workflow_id: str) -> dict[str, Any]:
    found: dict[str, Any] = scheduler().get_schedule(Name=schedule_name(uuid.UUID(workflow_id)), GroupName=group())
    return found


def group() -> str:
    return get_settings().schedule_group


@pytest.fixture
async def owner(http: httpx.AsyncClient, make_tenant: Any) -> AsyncIterator[dict[str, str]]:
    """A tenant's headers; every workflow it made is deleted afterwards, so no schedule outlives its test."""
    headers = auth_headers(make_tenant())
    yield headers
    for workflow in (await http.get("/api/v1/workflows", headers=headers)).json()["items"]:
        await http.delete(f"/api/v1/workflows/{workflow['id']}", headers=headers)


async def test_a_schedule_made_through_the_api_exists_in_eventbridge_scheduler(
    http: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    workflow = await create_workflow(
        http, owner, schedule={"expression": "cron(0 9 ? * MON-FRI *)", "timezone": "Europe/Berlin"}
    )
    wid = workflow["id"]

    created = aws_schedule(wid)
    assert (created["ScheduleExpression"], created["ScheduleExpressionTimezone"]) == (
        "cron(0 9 ? * MON-FRI *)",
        "Europe/Berlin",
    )
    assert created["GroupName"] == group() and created["State"] == "ENABLED"
    assert created["FlexibleTimeWindow"] == {"Mode": "OFF"}
    target = created["Target"]
    assert target["Arn"] == function_arn("pa-triggers") and target["RoleArn"].startswith("arn:aws:iam::")
    assert json.loads(target["Input"]) == {
        "source": "pa.schedule",
        "workflow_id": wid,
        "org_id": json.loads(target["Input"])["org_id"],
        "schedule_arn": "<aws.scheduler.schedule-arn>",
        "scheduled_time": "<aws.scheduler.scheduled-time>",
        "execution_id": "<aws.scheduler.execution-id>",
        "attempt": "<aws.scheduler.attempt-number>",
    }
    next_fire = datetime.fromisoformat(workflow["schedule"]["next_fire_at"]).astimezone(ZoneInfo("Europe/Berlin"))
    assert (next_fire.weekday() < 5, next_fire.hour, next_fire.minute) == (True, 9, 0)

    changed = await http.patch(
        f"/api/v1/workflows/{wid}", json={"schedule": {"expression": "rate(5 minutes)"}}, headers=owner
    )
    assert changed.status_code == 200 and changed.json()["schedule"]["expression"] == "rate(5 minutes)"
    updated = aws_schedule(wid)
    assert (updated["ScheduleExpression"], updated["ScheduleExpressionTimezone"]) == ("rate(5 minutes)", "UTC")
    paused = await http.patch(
        f"/api/v1/workflows/{wid}",
        json={"schedule": {"expression": "rate(5 minutes)", "enabled": False}},
        headers=owner,
    )
    assert paused.status_code == 200 and aws_schedule(wid)["State"] == "DISABLED"

    removed = await http.patch(f"/api/v1/workflows/{wid}", json={"schedule": None}, headers=owner)
    assert removed.status_code == 200 and removed.json()["schedule"] is None
    with pytest.raises(scheduler().exceptions.ResourceNotFoundException):
        aws_schedule(wid)


async def test_deleting_the_workflow_deletes_its_schedule(http: httpx.AsyncClient, owner: dict[str, str]) -> None:
    workflow = await create_workflow(http, owner, schedule={"expression": "rate(1 hour)"})
    assert aws_schedule(workflow["id"])["ScheduleExpression"] == "rate(1 hour)"

    deleted = await http.delete(f"/api/v1/workflows/{workflow['id']}", headers=owner)

    assert deleted.status_code == 204
    with pytest.raises(scheduler().exceptions.ResourceNotFoundException):
        aws_schedule(workflow["id"])
    assert (
        db_rows(
            os.environ["DATABASE_ADMIN_URL"], "SELECT 1 FROM workflow_schedules WHERE workflow_id = %s", workflow["id"]
        )
        == []
    )


async def test_the_triggers_function_starts_a_run_once_per_fire_as_scheduler_invokes_it(
    http: httpx.AsyncClient, owner: dict[str, str], echo_model: str
) -> None:
    workflow = await create_workflow(
        http,
        owner,
        model=echo_model,
        prompt_template="Nightly report for {{scheduled_time}}",
        schedule={"expression": "rate(1 day)"},
    )
    target = aws_schedule(workflow["id"])["Target"]
    fire = (
        target["Input"]
        .replace("<aws.scheduler.scheduled-time>", "2030-01-02T03:00:00Z")
        .replace("<aws.scheduler.schedule-arn>", "arn:aws:scheduler:us-east-1:123456789012:schedule/x/y")
        .replace("<aws.scheduler.execution-id>", str(uuid.uuid4()))
        .replace("<aws.scheduler.attempt-number>", "1")
    )
    lambda_client = boto3.client("lambda", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")

    def invoke() -> dict[str, Any]:
        answer = lambda_client.invoke(FunctionName=target["Arn"], Payload=fire.encode())
        assert "FunctionError" not in answer, answer["Payload"].read()
        result: dict[str, Any] = json.loads(answer["Payload"].read())
        return result

    first = await asyncio.to_thread(invoke)
    retried = await asyncio.to_thread(invoke)  # Scheduler delivers at least once

    assert first["status"] == "started" and first["duplicate"] is False
    assert retried == {**first, "duplicate": True}
    frames = await read_events(http, f"/api/v1/runs/{first['run_id']}/events", owner)
    assert text_of(frames) == "Echo: Nightly report for 2030-01-02T03:00:00Z"
    run = (await http.get(f"/api/v1/runs/{first['run_id']}", headers=owner)).json()
    assert (run["trigger_source"], run["mode"], run["chat_id"]) == ("schedule", "durable", workflow["chat_id"])
    history = (await http.get(f"/api/v1/workflows/{workflow['id']}/runs", headers=owner)).json()["items"]
    assert [(h["trigger"], h["key"], h["run_id"]) for h in history] == [
        ("schedule", "2030-01-02T03:00:00Z", first["run_id"])
    ]


def test_the_triggers_function_serves_signed_webhooks_from_the_http_api(live_url: str, make_tenant: Any) -> None:
    """The HTTP API routes POST /api/v1/hooks/{workflow_id} to the triggers function without an authorizer."""
    from functions.triggers.app import handler

    headers = auth_headers(make_tenant())
    with httpx.Client(base_url=live_url, timeout=30) as http:
        created = http.post("/api/v1/workflows", json={"name": "via-lambda"}, headers=headers)
        assert created.status_code == 201, created.text
        workflow = created.json()
        body = b'{"ping": true}'
        event = load_event("api_webhook.json")
        event["rawPath"] = event["requestContext"]["http"]["path"] = f"/api/v1/hooks/{workflow['id']}"
        event["pathParameters"] = {"workflow_id": workflow["id"]}
        event["headers"].update(sign(workflow["signing_secret"], body))
        event["body"] = body.decode()

        response = handler(event, FakeLambdaContext(function_name="personal-agent-triggers"))
        tampered = handler(
            {**event, "body": '{"ping": false}'}, FakeLambdaContext(function_name="personal-agent-triggers")
        )

        assert response["statusCode"] == 202, response["body"]
        accepted = json.loads(response["body"])
        assert response["headers"]["location"] == accepted["status_url"]
        assert http.get(accepted["status_url"], headers=headers).json()["trigger_source"] == "webhook"
        assert (tampered["statusCode"], json.loads(tampered["body"])["code"]) == (401, "invalid_signature")
        http.delete(f"/api/v1/workflows/{workflow['id']}", headers=headers)


async def test_the_local_scheduler_fires_a_due_schedule_exactly_once_across_restarts(
    http: httpx.AsyncClient, owner: dict[str, str], admin_url: str, echo_model: str
) -> None:
    workflow = await create_workflow(
        http,
        owner,
        model=echo_model,
        prompt_template="Scheduled at {{scheduled_time}}",
        schedule={"expression": "rate(5 minutes)"},
    )
    due = datetime.fromisoformat(workflow["schedule"]["next_fire_at"])

    def at(moment: datetime) -> LocalScheduler:
        return LocalScheduler(clock=lambda: moment)

    def mine(fired: list[Any]) -> list[str]:
        runs = {
            str(r[0])
            for r in db_rows(admin_url, "SELECT run_id FROM workflow_deliveries WHERE workflow_id = %s", workflow["id"])
        }
        return [str(a.run_id) for a in fired if str(a.run_id) in runs]

    assert mine(await at(due - timedelta(seconds=1)).tick()) == []  # not due yet
    # The dev server restarts around the due time: the old and the new process both tick after it.
    old, new = at(due + timedelta(seconds=1)), at(due + timedelta(seconds=2))
    fired = await asyncio.gather(old.tick(), new.tick())
    after_restart = await at(due + timedelta(seconds=30)).tick()

    started = mine(fired[0]) + mine(fired[1]) + mine(after_restart)
    assert len(started) == 1
    deliveries = db_rows(
        admin_url, "SELECT source, dedupe_key, status FROM workflow_deliveries WHERE workflow_id = %s", workflow["id"]
    )
    assert deliveries == [("schedule", time_key(due), "started")]
    (next_fire,) = db_rows(
        admin_url, "SELECT next_fire_at FROM workflow_schedules WHERE workflow_id = %s", workflow["id"]
    )[0]
    assert next_fire == due + timedelta(minutes=5)
    frames = await read_events(http, f"/api/v1/runs/{started[0]}/events", owner)
    assert text_of(frames) == f"Echo: Scheduled at {time_key(due)}"
    # The next fire time fires once too, and a schedule missed for hours fires once when the server is back.
    later = due + timedelta(hours=3)
    assert len(mine(await at(later).tick())) == 1
    assert mine(await at(later).tick()) == []
    keys = [
        r[0]
        for r in db_rows(
            admin_url,
            "SELECT dedupe_key FROM workflow_deliveries WHERE workflow_id = %s ORDER BY created_at",
            workflow["id"],
        )
    ]
    assert keys == [time_key(due), time_key(due + timedelta(minutes=5))]
