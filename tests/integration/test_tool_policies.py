"""Tool policies over arguments (issue 33, items 3-5), in process against the real stack: the admin API (422 with the
CEL error's position, order, cross-tenant 404), a rule `amount > 500 -> ask`, `amount <= 500 -> allow` on a
scripted call, a deny rule inside a sub-agent, a log-only rule that records without blocking (audit and report), a
scripted judge that denies, two-person approvals and escalation to the org's admins."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import httpx
import psycopg
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.lifecycle.approval_escalation import escalate_due
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.models.catalog import register_model, unregister_model
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec
from personal_agent.tools.registry import ToolDef, register_tool, unregister_tool
from tests import db_state
from tests.auth import auth_headers
from tests.mcp_demo import register
from tests.scripted import scripted_model, tool_rounds
from tests.sse import Frame, read_events
from tests.subagents import user_text

ADMIN = ("org-admin",)


@pytest.fixture
def refunds() -> Iterator[list[dict[str, Any]]]:
    """`refund_payment`, an acting tool with an `amount`; yields the refunds it made."""
    made: list[dict[str, Any]] = []

    def refund_payment(order: str, amount: int) -> str:
        made.append({"order": order, "amount": amount})
        return f"refunded {amount} on {order}"

    register_tool(ToolDef("refund_payment", refund_payment, "Refund (part of) an order's payment.", acts=True))
    yield made
    unregister_tool("refund_payment")


def refund_script(*amounts: int) -> Any:
    """Calls `refund_payment` once per amount, one round each, then answers with the last result."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        if len(returns) < len(amounts):
            args = json.dumps({"order": f"A-{len(returns)}", "amount": amounts[len(returns)]})
            yield {0: DeltaToolCall(name="refund_payment", json_args=args, tool_call_id=f"refund_{len(returns)}")}
        else:
            yield f"Done: {returns[-1].content}"

    return script


async def add_rule(http: httpx.AsyncClient, tenant: Any, **rule: Any) -> dict[str, Any]:
    created = await http.post("/api/v1/admin/tool-policies", json=rule, headers=auth_headers(tenant, roles=ADMIN))
    assert created.status_code == 201, created.text
    return dict(created.json())


async def run_chat(
    http: httpx.AsyncClient,
    tenant: Any,
    model: str,
    tools: tuple[str, ...] = ("refund_payment",),
    mode: Literal["inline", "durable"] = "inline",
    **chat: Any,
) -> RunSpec:
    headers = auth_headers(tenant)
    created = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    if chat.get("review_mode"):
        review = await http.put(f"/api/v1/chats/{created['id']}/review-mode", json=chat, headers=headers)
        assert review.status_code == 200, review.text
    request = LaunchRequest(
        org_id=tenant.org_id,
        user_id=tenant.user_id,
        chat_id=created["id"],
        message="refund the order",
        model=model,
        mode=mode,
        tools=tools,
    )
    return await launch_run(request)


async def until_paused_or_done(http: httpx.AsyncClient, tenant: Any, run_id: Any) -> list[Frame]:
    """The run's events until it waits for a person or ends."""
    frames: list[Frame] = []
    url = f"/api/v1/runs/{run_id}/events"
    while not frames or frames[-1].type not in ("RUN_FINISHED", "RUN_ERROR"):
        frames = await read_events(http, url, auth_headers(tenant), limit=len(frames) + 1, timeout=60)
    return frames


def approvals_asked(frames: list[Frame]) -> list[dict[str, Any]]:
    return [f.data["value"] for f in frames if f.data.get("name") == "approval_requested"]


def tool_results(frames: list[Frame]) -> list[str]:
    return [str(f.data.get("content", "")) for f in frames if f.type == "TOOL_CALL_RESULT"]


def audit_lines(admin_url: str, run_id: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(admin_url) as conn:
        return conn.execute(
            "SELECT action, tool_call_id, rule_id, detail ->> 'effect' FROM approval_audit"
            " WHERE run_id = %s ORDER BY id",
            [run_id],
        ).fetchall()


async def test_rules_are_checked_at_save_with_the_error_position_and_kept_in_order(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant(roles=ADMIN)
    admin = auth_headers(tenant, roles=ADMIN)
    bad = await http.post(
        "/api/v1/admin/tool-policies",
        json={"tool": "refund_*", "when": "args.amount > 500 &&", "effect": "ask"},
        headers=admin,
    )
    assert bad.status_code == 422 and bad.json()["code"] == "invalid_policy_rule"
    assert (bad.json()["details"]["line"], bad.json()["details"]["column"]) == (1, 19)
    unknown = await http.post(
        "/api/v1/admin/tool-policies", json={"tool": "x", "when": "secrets.leak == 1", "effect": "deny"}, headers=admin
    )
    assert unknown.status_code == 422 and "secrets" in unknown.json()["message"]
    quorum = await http.post(
        "/api/v1/admin/tool-policies", json={"tool": "x", "effect": "deny", "quorum": 2}, headers=admin
    )
    assert quorum.status_code == 422
    assert (await http.get("/api/v1/admin/tool-policies", headers=admin)).json()["items"] == []  # nothing half written

    first = await add_rule(http, tenant, tool="refund_*", when="args.amount > 500", effect="ask", reason="big refund")
    second = await add_rule(http, tenant, tool="*", effect="deny", position=0)
    listed = (await http.get("/api/v1/admin/tool-policies", headers=admin)).json()["items"]
    assert [r["id"] for r in listed] == [second["id"], first["id"]] and [r["position"] for r in listed] == [0, 1]
    moved = await http.patch(
        f"/api/v1/admin/tool-policies/{second['id']}", json={"position": 5, "log_only": True}, headers=admin
    )
    assert moved.status_code == 200 and moved.json()["position"] == 1 and moved.json()["log_only"] is True
    order = await http.put("/api/v1/admin/tool-policies/order", json={"ids": [second["id"]]}, headers=admin)
    assert order.status_code == 422 and order.json()["code"] == "invalid_policy_order"

    stranger = make_tenant(roles=ADMIN)
    other = auth_headers(stranger, roles=ADMIN)
    assert (
        await http.patch(f"/api/v1/admin/tool-policies/{first['id']}", json={"reason": "x"}, headers=other)
    ).status_code == 404
    assert (await http.delete(f"/api/v1/admin/tool-policies/{first['id']}", headers=other)).status_code == 404
    assert (await http.get("/api/v1/admin/tool-policies", headers=other)).json()["items"] == []
    assert (await http.get("/api/v1/admin/tool-policies", headers=auth_headers(tenant))).status_code == 403
    assert (await http.delete(f"/api/v1/admin/tool-policies/{first['id']}", headers=admin)).status_code == 204


async def test_amount_over_500_asks_and_up_to_500_runs_without_asking(
    http: httpx.AsyncClient, make_tenant: Any, refunds: list[dict[str, Any]]
) -> None:
    tenant = make_tenant(roles=ADMIN)
    await add_rule(http, tenant, tool="refund_payment", when="args.amount > 500", effect="ask", reason="over $500")
    await add_rule(http, tenant, tool="refund_payment", when="args.amount <= 500", effect="allow")
    with scripted_model(refund_script(120, 900)) as (model, _):
        spec = await run_chat(http, tenant, model)
        frames = await until_paused_or_done(http, tenant, spec.run_id)
        # 120: allowed (an acting tool with no router confidence would otherwise ask); 900: asks
        assert refunds == [{"order": "A-0", "amount": 120}]
        asked = approvals_asked(frames)
        assert [a["args"]["amount"] for a in asked] == [900]
        decided = await http.post(
            f"/api/v1/approvals/{asked[0]['approval_id']}", json={"decision": "approve"}, headers=auth_headers(tenant)
        )
        assert decided.status_code == 200, decided.text
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(tenant), timeout=60)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert refunds == [{"order": "A-0", "amount": 120}, {"order": "A-1", "amount": 900}]


async def test_a_person_who_edits_arguments_past_a_deny_rule_is_still_denied(
    http: httpx.AsyncClient, make_tenant: Any, refunds: list[dict[str, Any]]
) -> None:
    tenant = make_tenant(roles=ADMIN)
    await add_rule(http, tenant, tool="refund_payment", when="args.amount > 10000", effect="deny", reason="too large")
    await add_rule(http, tenant, tool="refund_payment", effect="ask")
    with scripted_model(refund_script(50)) as (model, _):
        spec = await run_chat(http, tenant, model)
        asked = approvals_asked(await until_paused_or_done(http, tenant, spec.run_id))
        edited = {"order": "A-0", "amount": 50_000}
        decided = await http.post(
            f"/api/v1/approvals/{asked[0]['approval_id']}",
            json={"decision": "approve", "arguments": edited},
            headers=auth_headers(tenant),
        )
        assert decided.status_code == 200
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(tenant), timeout=60)
    assert refunds == []
    assert any("tool policy: too large" in r for r in tool_results(frames))


async def test_a_deny_rule_holds_inside_a_sub_agent(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, refunds: list[dict[str, Any]]
) -> None:
    tenant = make_tenant(roles=ADMIN)
    rule = await add_rule(
        http, tenant, tool="refund_*", when="args.amount >= 1", effect="deny", reason="refunds are frozen"
    )

    async def tree(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        child = user_text(messages).startswith("child:")
        if not returns:
            call = (
                DeltaToolCall(name="refund_payment", json_args='{"order": "C-1", "amount": 5}', tool_call_id="r1")
                if child
                else DeltaToolCall(name="delegate", json_args='{"task": "child: refund C-1"}', tool_call_id="d1")
            )
            yield {0: call}
        else:
            yield f"{'child' if child else 'parent'} saw: {returns[-1].content}"

    with scripted_model(tree) as (model, _):
        spec = await run_chat(http, tenant, model, tools=("delegate", "refund_payment"))
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(tenant), timeout=60)
    assert frames[-1].type == "RUN_FINISHED"
    assert refunds == []
    finished = [f.data["value"] for f in frames if f.data.get("name") == "subagent_finished"]
    assert finished and "refunds are frozen" in json.dumps(finished)
    with psycopg.connect(admin_url) as conn:
        denied = conn.execute(
            "SELECT r.parent_run_id FROM approval_audit a JOIN runs r ON r.id = a.run_id"
            " WHERE a.rule_id = %s AND a.action = 'policy_denied'",
            [rule["id"]],
        ).fetchall()
    assert denied == [(spec.run_id,)]  # the child's call, denied in the child


async def test_a_log_only_rule_records_what_it_would_have_done_without_blocking(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, refunds: list[dict[str, Any]]
) -> None:
    tenant = make_tenant(roles=ADMIN)
    trial = await add_rule(http, tenant, tool="refund_payment", when="args.amount > 100", effect="deny", log_only=True)
    await add_rule(http, tenant, tool="refund_payment", effect="allow")
    with scripted_model(refund_script(300)) as (model, _):
        spec = await run_chat(http, tenant, model)
        frames = await until_paused_or_done(http, tenant, spec.run_id)
    assert frames[-1].data["outcome"] == {"type": "success"} and approvals_asked(frames) == []
    assert refunds == [{"order": "A-0", "amount": 300}]  # not blocked
    lines = audit_lines(admin_url, spec.run_id)
    assert ("policy_log", "refund_0", uuid.UUID(trial["id"]), "deny") in lines
    trail = (await http.get("/api/v1/admin/approval-audit", headers=auth_headers(tenant, roles=ADMIN))).json()
    logged = [i for i in trail["items"] if i["action"] == "policy_log"]
    assert logged and logged[0]["run_id"] == str(spec.run_id) and logged[0]["tool_call_id"] == "refund_0"
    report = await http.get("/api/v1/admin/tool-policies/report", headers=auth_headers(tenant, roles=ADMIN))
    assert report.status_code == 200, report.text
    item = next(i for i in report.json()["items"] if i["rule_id"] == trial["id"])
    assert item["would_have"] == {"deny": 1} and item["log_only"] is True and item["enforced"] == {}


@pytest.fixture
def judge() -> Iterator[tuple[str, list[str]]]:
    """A cheap model that classifies requests as sure and, as the judge, denies every call; yields its id and what
    it was asked to judge."""
    judged: list[str] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tool = info.output_tools[0]
        if "decision" in json.dumps(tool.parameters_json_schema):
            judged.append(user_text(messages))
            return ModelResponse(parts=[ToolCallPart(tool.name, {"decision": "deny", "reason": "not what was asked"})])
        args = {"intent": "refund", "acts_on_world": True, "confidence": 1.0}
        return ModelResponse(parts=[ToolCallPart(tool.name, args)])

    register_model("judge:strict", lambda: FunctionModel(answer, model_name="judge"), tags=("cheap",), quality=2)
    yield "judge:strict", judged
    unregister_model("judge:strict")


async def test_a_scripted_judge_denies_a_call_and_its_cost_is_on_the_ledger(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    refunds: list[dict[str, Any]],
    judge: tuple[str, list[str]],
) -> None:
    tenant = make_tenant(roles=ADMIN)
    settings = {"tier_floor": 0, "confidence_threshold": 0.5, "routing_model": judge[0]}
    put = await http.put("/api/v1/admin/settings", headers=auth_headers(tenant, roles=ADMIN), json=settings)
    assert put.status_code == 200, put.text
    with scripted_model(refund_script(20)) as (model, _):
        spec = await run_chat(http, tenant, model, review_mode="judge")
        frames = await until_paused_or_done(http, tenant, spec.run_id)
    assert spec.tool_policy.review_mode == "judge"
    assert frames[-1].data["outcome"] == {"type": "success"} and approvals_asked(frames) == []
    assert refunds == []  # the judge's deny is final: nobody was asked
    assert any("reviewing model: not what was asked" in r for r in tool_results(frames))
    assert "refund_payment" in judge[1][0] and '"amount": 20' in judge[1][0]
    with psycopg.connect(admin_url) as conn:
        indexes = [
            r[0] for r in conn.execute("SELECT request_index FROM usage_records WHERE run_id = %s", [spec.run_id])
        ]
    assert sorted(indexes) == [-2, -1, 0, 1]  # the judge (-2) beside the router (-1) and the two answers
    assert ("judge_denied", "refund_0", None, None) in audit_lines(admin_url, spec.run_id)


async def test_approve_each_asks_even_where_a_rule_allows(
    http: httpx.AsyncClient, make_tenant: Any, refunds: list[dict[str, Any]]
) -> None:
    tenant = make_tenant(roles=ADMIN)
    await add_rule(http, tenant, tool="refund_payment", effect="allow")
    with scripted_model(refund_script(10)) as (model, _):
        spec = await run_chat(http, tenant, model, review_mode="approve_each")
        asked = approvals_asked(await until_paused_or_done(http, tenant, spec.run_id))
    assert len(asked) == 1 and refunds == []


def colleague(admin_url: str, tenant: Any, roles: tuple[str, ...]) -> Any:
    """Another member of `tenant`'s org (a fresh user of the dev issuer) with `roles`."""
    subject = f"user-{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "INSERT INTO users (issuer, subject, email) VALUES (%s, %s, %s) RETURNING id",
            [get_settings().dev_issuer, subject, f"{subject}@example.test"],
        ).fetchone()
        assert row is not None
        conn.execute(
            "INSERT INTO memberships (org_id, user_id, roles) VALUES (%s, %s, %s)", [tenant.org_id, row[0], list(roles)]
        )
    return type(tenant)(tenant.org_id, tenant.slug, row[0], subject)


@pytest.mark.parametrize("mode", ["inline", "durable"])
async def test_quorum_two_needs_two_different_approvers_neither_the_requester(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, refunds: list[dict[str, Any]], mode: Any
) -> None:
    owner = make_tenant(roles=ADMIN)  # an org admin whose own run asks: still not one of the two
    first, second = colleague(admin_url, owner, ADMIN), colleague(admin_url, owner, ADMIN)
    await add_rule(http, owner, tool="refund_payment", when="args.amount > 500", effect="ask", quorum=2)
    with scripted_model(refund_script(800)) as (model, _):
        spec = await run_chat(http, owner, model, mode=mode)  # durable: one task-token wait for both approvals
        asked = approvals_asked(await until_paused_or_done(http, owner, spec.run_id))
        url = f"/api/v1/approvals/{asked[0]['approval_id']}"
        mine = await http.post(url, json={"decision": "approve"}, headers=auth_headers(owner, roles=ADMIN))
        assert (mine.status_code, mine.json()["code"]) == (403, "requester_cannot_approve")
        one = await http.post(url, json={"decision": "approve"}, headers=auth_headers(first, roles=ADMIN))
        assert one.status_code == 200 and one.json()["status"] == "pending"
        again = await http.post(url, json={"decision": "approve"}, headers=auth_headers(first, roles=ADMIN))
        assert (again.status_code, again.json()["code"]) == (409, "already_approved_by_you")
        assert refunds == []  # one approval of two: the run still waits
        two = await http.post(url, json={"decision": "approve"}, headers=auth_headers(second, roles=ADMIN))
        assert two.status_code == 200 and two.json()["status"] == "approved"
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(owner), timeout=60)
    assert frames[-1].data["outcome"] == {"type": "success"}
    assert refunds == [{"order": "A-0", "amount": 800}]


async def test_an_approval_nobody_decided_in_time_escalates_to_the_org_admins_once(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, refunds: list[dict[str, Any]]
) -> None:
    owner = make_tenant()
    admin = colleague(admin_url, owner, ADMIN)
    await add_rule(http, admin, tool="refund_payment", effect="ask")
    with scripted_model(refund_script(30)) as (model, _):
        spec = await run_chat(http, owner, model)
        asked = approvals_asked(await until_paused_or_done(http, owner, spec.run_id))
        approval_id = uuid.UUID(asked[0]["approval_id"])
        assert approval_id not in await escalate_due()  # not due yet
        db_state.approval_escalation_due(admin_url, spec.run_id)
        assert approval_id in await escalate_due()
        assert approval_id not in await escalate_due()  # once
        decided = await http.post(
            f"/api/v1/approvals/{approval_id}", json={"decision": "approve"}, headers=auth_headers(admin, roles=ADMIN)
        )
        assert decided.status_code == 200 and decided.json()["status"] == "approved"
        await read_events(http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(owner), timeout=60)
    assert refunds == [{"order": "A-0", "amount": 30}]
    with psycopg.connect(admin_url) as conn:
        actions = [
            r[0]
            for r in conn.execute("SELECT action FROM approval_audit WHERE approval_id = %s ORDER BY id", [approval_id])
        ]
    assert actions[:3] == ["requested", "review_asked", "escalated"] and actions.count("escalated") == 1


async def test_a_deny_rule_holds_for_an_mcp_tool_that_would_run_without_asking(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[Any, Any]
) -> None:
    server, log = demo
    tenant = make_tenant(roles=ADMIN)
    await register(
        http, auth_headers(tenant, roles=ADMIN), server.url, policies={"post_note": {"acts": True, "approval": "never"}}
    )
    await add_rule(http, tenant, tool="demo_*", when='args.team == "ops"', effect="deny", reason="ops is read-only")

    async def post(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if tool_rounds(messages) == 0:
            yield {0: DeltaToolCall(name="demo_post_note", json_args='{"team": "ops", "text": "hi"}', tool_call_id="p")}
        else:
            yield "Done."

    with scripted_model(post) as (model, _):
        spec = await run_chat(http, tenant, model, tools=("demo_post_note",))
        frames = await until_paused_or_done(http, tenant, spec.run_id)
    assert frames[-1].data["outcome"] == {"type": "success"} and approvals_asked(frames) == []
    assert log.sent == []  # the MCP server never saw the call
    assert any("tool policy: ops is read-only" in r for r in tool_results(frames))


async def test_an_agents_review_mode_applies_and_its_chat_cannot_lower_it(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant(roles=ADMIN)
    headers = auth_headers(tenant)
    await add_rule(http, tenant, tool="send_demo_message", effect="allow")  # the gates alone would not ask now
    body = {"slug": "notifier", "name": "Notifier", "instructions": "You send notes.", "tools": ["send_demo_message"]}
    body["review_mode"] = "approve_each"
    agent = await http.post("/api/v1/agents", json=body, headers=headers)
    assert agent.status_code == 201, agent.text
    chat = (await http.post("/api/v1/chats", json={"agent": "notifier"}, headers=headers)).json()
    lowered = await http.put(
        f"/api/v1/chats/{chat['id']}/review-mode", json={"review_mode": "autonomous"}, headers=headers
    )
    assert lowered.status_code == 200

    async def send(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if tool_rounds(messages) == 0:
            yield {
                0: DeltaToolCall(name="send_demo_message", json_args='{"to": "ops", "text": "hi"}', tool_call_id="s")
            }
        else:
            yield "Sent."

    with scripted_model(send) as (model, _):
        request = LaunchRequest(
            org_id=tenant.org_id,
            user_id=tenant.user_id,
            chat_id=chat["id"],
            message="tell ops hi",
            model=model,
            mode="inline",
        )
        spec = await launch_run(request)
        frames = await until_paused_or_done(http, tenant, spec.run_id)
        asked = approvals_asked(frames)
    assert spec.tool_policy.review_mode == "approve_each" and len(asked) == 1, tool_results(frames)
    assert asked[0]["tool"] == "send_demo_message" and tool_results(frames) == []  # asked, not sent
    other = make_tenant()
    refused = await http.put(
        f"/api/v1/chats/{chat['id']}/review-mode", json={"review_mode": "judge"}, headers=auth_headers(other)
    )
    assert (refused.status_code, refused.json()["code"]) == (404, "chat_not_found")


@contextmanager
def judging(name: str, verdict: dict[str, str] | None) -> Iterator[str]:
    """A cheap model that classifies requests as sure and, as the judge, answers `verdict` (None: it fails, as a
    provider that is down does); yields its id."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tool = info.output_tools[0]
        if "decision" in json.dumps(tool.parameters_json_schema):
            if verdict is None:
                raise RuntimeError("the judge's provider is down")
            return ModelResponse(parts=[ToolCallPart(tool.name, verdict)])
        args = {"intent": "refund", "acts_on_world": True, "confidence": 1.0}
        return ModelResponse(parts=[ToolCallPart(tool.name, args)])

    register_model(name, lambda: FunctionModel(answer, model_name="judge"), tags=("cheap",), quality=2)
    try:
        yield name
    finally:
        unregister_model(name)


@pytest.mark.parametrize(
    ("verdict", "why"),
    [
        ({"decision": "ask", "reason": "a refund wants a person's eye"}, "a refund wants a person's eye"),
        (None, "the reviewing model gave no verdict"),  # a judge that fails asks: it never lets a call through
    ],
    ids=["judge-asks", "judge-fails"],
)
async def test_a_judge_that_asks_or_fails_puts_the_call_before_a_person(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    refunds: list[dict[str, Any]],
    verdict: dict[str, str] | None,
    why: str,
) -> None:
    tenant = make_tenant(roles=ADMIN)
    with judging(f"judge:{'asks' if verdict else 'fails'}", verdict) as judge_model:
        settings = {"tier_floor": 0, "confidence_threshold": 0.5, "routing_model": judge_model}
        put = await http.put("/api/v1/admin/settings", headers=auth_headers(tenant, roles=ADMIN), json=settings)
        assert put.status_code == 200, put.text
        with scripted_model(refund_script(20)) as (model, _):
            spec = await run_chat(http, tenant, model, review_mode="judge")
            frames = await until_paused_or_done(http, tenant, spec.run_id)
    (asked,) = approvals_asked(frames)
    assert frames[-1].data["outcome"]["type"] == "interrupt" and refunds == []  # waiting for a person, not run
    assert (asked["tool"], asked["args"]) == ("refund_payment", {"order": "A-0", "amount": 20})
    pending = (await http.get("/api/v1/approvals", params={"status": "pending"}, headers=auth_headers(tenant))).json()
    assert [a["id"] for a in pending["items"]] == [asked["approval_id"]]
    with psycopg.connect(admin_url) as conn:
        (detail,) = conn.execute(
            "SELECT detail FROM approval_audit WHERE approval_id = %s AND action = 'review_asked'",
            [asked["approval_id"]],
        ).fetchone() or (None,)
    assert detail == {"by": "judge", "reason": why, "quorum": 1}
    assert "judge_denied" not in [line[0] for line in audit_lines(admin_url, spec.run_id)]
