"""Runs on `pa dev` as a user starts it: the `pa` console script (so the repo root is not on `sys.path`), from a
folder inside the repo, driven over HTTP only. A durable chat turn, a webhook-triggered run and a scheduled run
(EventBridge Scheduler's target input, invoked through the local AWS endpoint) all end `succeeded`."""

from __future__ import annotations

import json
import subprocess
import uuid
from datetime import UTC, datetime
from typing import Any

import boto3
import httpx
import pytest

from tests.e2e.pa_dev import PA, ROOT, DevServer
from tests.workflows import sign


def _events(server: DevServer, run_id: str, auth: dict[str, str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Follow the run's event stream to its end (the relay closes it); return every event and the run."""
    events: list[dict[str, Any]] = []
    with (
        httpx.Client(base_url=server.url, timeout=60) as http,
        http.stream("GET", f"/api/v1/runs/{run_id}/events", headers=auth) as stream,
    ):
        assert stream.status_code == 200
        for line in stream.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
        run = http.get(f"/api/v1/runs/{run_id}", headers=auth).json()
    return events, run


def _finish(server: DevServer, run_id: str) -> tuple[str, dict[str, Any]]:
    """Follow the run's event stream to its end; return the last event's type and the run."""
    events, run = _events(server, run_id, server.auth)
    return str(events[-1].get("type") if events else None), run


@pytest.mark.timeout(240)
def test_a_durable_chat_turn_succeeds_on_pa_dev(dev_server: DevServer) -> None:
    with httpx.Client(base_url=dev_server.url, headers=dev_server.auth, timeout=30) as http:
        chat = http.post("/api/v1/chats", json={"title": "durable"}).json()
        started = http.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": "hello", "mode": "durable"})
    assert started.status_code == 202, started.text
    last, run = _finish(dev_server, started.json()["run_id"])
    assert (last, run["status"], run["mode"]) == ("RUN_FINISHED", "succeeded", "durable")


@pytest.mark.timeout(240)
def test_a_webhook_triggered_run_succeeds_on_pa_dev(dev_server: DevServer) -> None:
    with httpx.Client(base_url=dev_server.url, timeout=30) as http:
        workflow = http.post("/api/v1/workflows", json={"name": "ci"}, headers=dev_server.auth).json()
        body = json.dumps({"build": 42, "result": "green"})
        signed = sign(workflow["signing_secret"], body.encode())
        accepted = http.post(f"/api/v1/hooks/{workflow['id']}", content=body, headers=signed)
    assert accepted.status_code == 202, accepted.text
    last, run = _finish(dev_server, accepted.json()["run_id"])
    assert (last, run["status"], run["trigger_source"]) == ("RUN_FINISHED", "succeeded", "webhook")


@pytest.mark.timeout(240)
def test_a_scheduled_run_succeeds_on_pa_dev(dev_server: DevServer) -> None:
    with httpx.Client(base_url=dev_server.url, headers=dev_server.auth, timeout=30) as http:
        workflow = http.post(
            "/api/v1/workflows", json={"name": "nightly", "schedule": {"expression": "rate(1 day)"}}
        ).json()
    aws = {"endpoint_url": dev_server.aws_url, "region_name": "us-east-1", "aws_access_key_id": "testing"}
    aws["aws_secret_access_key"] = "testing"
    # What EventBridge Scheduler does at a fire time: invoke the schedule's target with its input.
    schedule = boto3.client("scheduler", **aws).get_schedule(
        Name=f"pa-wf-{workflow['id']}", GroupName="personal-agent-local"
    )
    fire = (
        schedule["Target"]["Input"]
        .replace("<aws.scheduler.scheduled-time>", datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        .replace("<aws.scheduler.schedule-arn>", schedule["Arn"])
        .replace("<aws.scheduler.execution-id>", str(uuid.uuid4()))
        .replace("<aws.scheduler.attempt-number>", "1")
    )
    answer = boto3.client("lambda", **aws).invoke(FunctionName=schedule["Target"]["Arn"], Payload=fire.encode())
    result = json.loads(answer["Payload"].read())
    assert "FunctionError" not in answer and result["status"] == "started", result
    last, run = _finish(dev_server, result["run_id"])
    assert (last, run["status"], run["trigger_source"]) == ("RUN_FINISHED", "succeeded", "schedule")


@pytest.mark.timeout(240)
def test_the_demo_org_has_the_demo_mcp_tools_and_the_demo_model_calls_one(dev_server: DevServer) -> None:
    # As the startup banner says: a token for the demo org `acme`, where `pa dev` registered its demo MCP server.
    token = subprocess.run(
        [str(PA), "token", "--org", "acme", "--user", "alice", "--role", "admin"],
        cwd=ROOT / "docs",
        env=dev_server.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    auth = {"Authorization": f"Bearer {token.splitlines()[-1]}"}
    with httpx.Client(base_url=dev_server.url, headers=auth, timeout=30) as http:
        tools = http.get("/api/v1/tools")
        assert tools.status_code == 200, tools.text
        offered = {t["name"]: t for t in tools.json()["items"]}
        assert offered["demo_weather"]["source"] == "mcp" and offered["demo_weather"]["acts"] is False
        assert offered["demo_post_note"]["acts"] is True
        chat = http.post("/api/v1/chats", json={"title": "demo tools"}).json()
        started = http.post(
            f"/api/v1/chats/{chat['id']}/runs",
            json={"message": '/tool demo_weather {"city": "Oslo"}', "model": "offline:demo", "tools": ["demo_weather"]},
        )
    assert started.status_code == 202, started.text
    events, run = _events(dev_server, started.json()["run_id"], auth)
    assert [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"] == ["demo_weather"]
    assert [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == ["Oslo: sunny, 20 °C"]
    text = "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert "Oslo: sunny, 20 °C" in text
    assert (events[-1]["type"], run["status"]) == ("RUN_FINISHED", "succeeded")
