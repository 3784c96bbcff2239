"""Approval escalation on AWS (issue 33 item 5), against moto's EventBridge Scheduler and Lambda and the real
database: an approval that can escalate gets a one-time schedule at its escalation time aimed at the run recovery
function; that function, invoked with the schedule's own input, escalates it to the org admins (feed and a web
push pointer on the outputs queue); a decision deletes the schedule. And the approvals API shows a two-person
approval's quorum and who approved so far, by name."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import httpx
import psycopg
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.approvals.escalation_schedule import ESCALATION_SOURCE, schedule_name
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.local.aws import ACCOUNT_ID, function_arn
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec
from personal_agent.tools.registry import ToolDef, register_tool, unregister_tool
from tests import db_state
from tests.auth import auth_headers
from tests.push_browser import BrowserKeys
from tests.receiver import Receiver
from tests.scripted import scripted_model
from tests.sse import read_events

ADMIN = ("org-admin",)
ESCALATE_AFTER = 600


def org_admin_of(admin_url: str, tenant: Any) -> Any:
    """Another member of `tenant`'s org, an org admin."""
    subject = f"admin-{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "INSERT INTO users (issuer, subject, email) VALUES (%s, %s, %s) RETURNING id",
            [get_settings().dev_issuer, subject, f"{subject}@example.test"],
        ).fetchone()
        assert row is not None
        conn.execute(
            "INSERT INTO memberships (org_id, user_id, roles) VALUES (%s, %s, %s)", [tenant.org_id, row[0], list(ADMIN)]
        )
    return type(tenant)(tenant.org_id, tenant.slug, row[0], subject)


@pytest.fixture
def push_service(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> Receiver:
    """A push service on loopback, allowed as the operator would (`PA_PUSH_ALLOW_HOSTS`)."""
    monkeypatch.setattr(get_settings(), "push_allow_hosts", f"push.example.com,127.0.0.1:{receiver.port}")
    receiver.status = 201
    return receiver


def aws(service: str) -> Any:
    return boto3.client(service, endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")


@pytest.fixture
def escalation_on_aws() -> Iterator[None]:
    """The settings the template gives the functions that pause runs: schedules aimed at `pa-run-recovery`."""
    saved = {k: os.environ.get(k) for k in ("PA_ESCALATION_TARGET_ARN", "PA_ESCALATION_ROLE_ARN")}
    os.environ["PA_ESCALATION_TARGET_ARN"] = function_arn("pa-run-recovery")
    os.environ["PA_ESCALATION_ROLE_ARN"] = f"arn:aws:iam::{ACCOUNT_ID}:role/pa-escalation-scheduler"
    os.environ["PA_APPROVAL_ESCALATION_SECONDS"] = str(ESCALATE_AFTER)
    get_settings.cache_clear()
    client, group = aws("scheduler"), get_settings().schedule_group
    try:
        client.get_schedule_group(Name=group)
    except client.exceptions.ResourceNotFoundException:
        client.create_schedule_group(Name=group)
    yield
    os.environ.pop("PA_APPROVAL_ESCALATION_SECONDS", None)
    for key, value in saved.items():
        os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    get_settings.cache_clear()


@pytest.fixture
def refunds() -> Iterator[list[int]]:
    made: list[int] = []

    def refund_payment(order: str, amount: int) -> str:
        made.append(amount)
        return f"refunded {amount} on {order}"

    register_tool(ToolDef("refund_payment", refund_payment, "Refund (part of) an order's payment.", acts=True))
    yield made
    unregister_tool("refund_payment")


async def _refund_once(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    done = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    if not done:
        yield {0: DeltaToolCall(name="refund_payment", json_args='{"order": "A-1", "amount": 900}', tool_call_id="r1")}
    else:
        yield f"Done: {done[-1].content}"


async def paused_run(
    http: httpx.AsyncClient, tenant: Any, admin: Any, model: str, quorum: int = 1
) -> tuple[RunSpec, uuid.UUID]:
    """A run of `tenant` waiting on an approval a rule asked for; its approval's id."""
    rule = {"tool": "refund_payment", "effect": "ask", "quorum": quorum}
    saved = await http.post("/api/v1/admin/tool-policies", json=rule, headers=auth_headers(admin, roles=ADMIN))
    assert saved.status_code == 201, saved.text
    chat = (await http.post("/api/v1/chats", json={}, headers=auth_headers(tenant))).json()
    request = LaunchRequest(
        org_id=tenant.org_id, user_id=tenant.user_id, chat_id=chat["id"], message="refund it", model=model,
        tools=("refund_payment",),
    )  # fmt: skip
    spec = await launch_run(request)
    frames: list[Any] = []
    while not any(f.data.get("name") == "approval_requested" for f in frames):  # the stream stays open
        url = f"/api/v1/runs/{spec.run_id}/events"
        frames = await read_events(http, url, auth_headers(tenant), limit=len(frames) + 1, timeout=60)
    asked = [f.data["value"] for f in frames if f.data.get("name") == "approval_requested"]
    return spec, uuid.UUID(asked[0]["approval_id"])


def schedule_of(approval_id: uuid.UUID) -> dict[str, Any]:
    found: dict[str, Any] = aws("scheduler").get_schedule(
        Name=schedule_name(approval_id), GroupName=get_settings().schedule_group
    )
    return found


def escalate_at(admin_url: str, approval_id: uuid.UUID) -> datetime:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT escalate_at FROM approvals WHERE id = %s", [approval_id]).fetchone()
    assert row is not None and row[0] is not None
    at: datetime = row[0]
    return at


async def test_an_approval_gets_a_one_time_schedule_that_escalates_it_through_run_recovery(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    escalation_on_aws: None,
    refunds: list[int],
    push_service: Receiver,
) -> None:
    owner = make_tenant()
    admin = org_admin_of(admin_url, owner)
    browser = BrowserKeys()
    subscribed = await http.post(
        "/api/v1/push/subscriptions",
        json=browser.subscription(f"{push_service.url}/admin"),
        headers=auth_headers(admin),
    )
    assert subscribed.status_code == 201
    with scripted_model(_refund_once) as (model, _):
        spec, approval_id = await paused_run(http, owner, admin, model)

    schedule = schedule_of(approval_id)
    due = escalate_at(admin_url, approval_id)
    assert timedelta(seconds=ESCALATE_AFTER - 60) < due - datetime.now(UTC) <= timedelta(seconds=ESCALATE_AFTER)
    expression = datetime.strptime(schedule["ScheduleExpression"], "at(%Y-%m-%dT%H:%M:%S)").replace(tzinfo=UTC)
    assert timedelta(0) <= expression - due < timedelta(seconds=1)  # at its time, never before
    assert schedule["ActionAfterCompletion"] == "DELETE"  # gone once it fired
    target = schedule["Target"]
    assert target["Arn"] == function_arn("pa-run-recovery")
    assert json.loads(target["Input"]) == {
        "source": ESCALATION_SOURCE,
        "org_id": str(owner.org_id),
        "approval_id": str(approval_id),
    }

    def fire() -> dict[str, Any]:  # what Scheduler does at the time: invoke the target with the input
        answer = aws("lambda").invoke(FunctionName=target["Arn"], Payload=target["Input"].encode())
        assert "FunctionError" not in answer, answer["Payload"].read()
        result: dict[str, Any] = json.loads(answer["Payload"].read())
        return result

    assert str(approval_id) not in (await asyncio.to_thread(fire))["escalated"]  # early: nothing to do
    db_state.approval_escalation_due(admin_url, spec.run_id)
    assert str(approval_id) in (await asyncio.to_thread(fire))["escalated"]
    assert str(approval_id) not in (await asyncio.to_thread(fire))["escalated"]  # at least once: escalated once
    with psycopg.connect(admin_url) as conn:
        actions = [
            r[0] for r in conn.execute("SELECT action FROM approval_audit WHERE approval_id = %s", [approval_id])
        ]
    assert actions.count("escalated") == 1
    (_, body) = push_service.wait_for(1)[0]  # the admin's browser, through the outputs queue and deliver function
    pushed = browser.decrypt(body)
    assert (pushed["type"], pushed["approval_id"], pushed["title"]) == (
        "approval_escalated",
        str(approval_id),
        "Approval escalated to you",
    )
    assert pushed["body"] == "refund_payment waits for an approval nobody gave in time"
    assert "900" not in json.dumps(pushed)  # never the call's arguments
    assert len(push_service.requests) == 1  # escalated once, pushed once
    assert refunds == []  # escalation decides nothing: the run still waits


async def test_deciding_the_approval_deletes_its_schedule(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, escalation_on_aws: None, refunds: list[int]
) -> None:
    owner = make_tenant()
    admin = org_admin_of(admin_url, owner)
    with scripted_model(_refund_once) as (model, _):
        spec, approval_id = await paused_run(http, owner, admin, model)
        assert schedule_of(approval_id)["State"] == "ENABLED"
        decided = await http.post(
            f"/api/v1/approvals/{approval_id}", json={"decision": "approve"}, headers=auth_headers(owner)
        )
        assert decided.status_code == 200 and decided.json()["status"] == "approved"
        client = aws("scheduler")
        with pytest.raises(client.exceptions.ResourceNotFoundException):
            client.get_schedule(Name=schedule_name(approval_id), GroupName=get_settings().schedule_group)
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(owner), timeout=60)
    assert frames[-1].type == "RUN_FINISHED" and refunds == [900]


async def test_the_approvals_api_shows_the_quorum_and_who_approved_so_far(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, refunds: list[int]
) -> None:
    owner = make_tenant()
    first, second = org_admin_of(admin_url, owner), org_admin_of(admin_url, owner)
    db_state.name_user(admin_url, first.subject, "Alice Admin")
    with scripted_model(_refund_once) as (model, _):
        spec, approval_id = await paused_run(http, owner, first, model, quorum=2)

        async def listed(tenant: Any) -> dict[str, Any]:
            items = (await http.get("/api/v1/approvals", headers=auth_headers(tenant, roles=ADMIN))).json()["items"]
            return next(i for i in items if i["id"] == str(approval_id))

        before = await listed(owner)
        assert (before["quorum"], before["approved_by"], before["status"]) == (2, [], "pending")
        url = f"/api/v1/approvals/{approval_id}"
        one = await http.post(url, json={"decision": "approve"}, headers=auth_headers(first, roles=ADMIN))
        assert one.status_code == 200
        assert (one.json()["status"], one.json()["approved_by"]) == (
            "pending",
            [{"id": str(first.user_id), "name": "Alice Admin"}],
        )
        assert (await listed(second))["approved_by"] == [{"id": str(first.user_id), "name": "Alice Admin"}]
        assert refunds == []
        two = await http.post(url, json={"decision": "approve"}, headers=auth_headers(second, roles=ADMIN))
        assert (two.json()["status"], two.json()["quorum"], len(two.json()["approved_by"])) == ("approved", 2, 2)
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(owner), timeout=60)
    assert frames[-1].type == "RUN_FINISHED" and refunds == [900]
    stranger = make_tenant(roles=ADMIN)  # another org's admin sees none of it
    theirs = (await http.get("/api/v1/approvals", headers=auth_headers(stranger, roles=ADMIN))).json()["items"]
    assert str(approval_id) not in [i["id"] for i in theirs]
