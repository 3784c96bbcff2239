"""The ledger outlives deletions: usage rows and the approval audit survive deleting a chat (and its runs),
budgets keep counting them, /usage and the CSV export keep showing them, and nothing can rewrite them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from typing import Any

import httpx
import psycopg
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.tools.registry import ToolDef, register_tool, unregister_tool
from tests.auth import auth_headers
from tests.runs import start_run
from tests.scripted import scripted_model, text_then_tool
from tests.sse import read_events


async def test_deleting_a_chat_keeps_its_usage_in_budgets_reports_and_export(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    with scripted_model(text_then_tool(rounds=1), model_name="gpt-4o-mini") as (model, _):
        run = await start_run(http, headers, model)
        await read_events(http, run["events_url"], headers)
        with psycopg.connect(admin_url) as conn:
            (spent,) = conn.execute(
                "SELECT sum(cost_usd) FROM usage_records WHERE run_id = %s", [run["run_id"]]
            ).fetchone()
        assert spent > 0
        cap = await http.put(
            "/api/v1/admin/budgets",
            json={"scope": "user", "user_id": str(tenant.user_id), "monthly_usd": str(spent)},
            headers=headers,
        )
        assert cap.status_code == 200, cap.text
        assert (await http.delete(f"/api/v1/chats/{run['chat_id']}", headers=headers)).status_code == 204

        chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
        again = await http.post(
            f"/api/v1/chats/{chat['id']}/runs", json={"message": "more", "model": model}, headers=headers
        )
    assert (again.status_code, again.json()["code"]) == (429, "budget_exceeded")  # deleting did not reset spend
    report = (await http.get("/api/v1/usage?group_by=chat", headers=headers)).json()
    assert [(i["key"], i["requests"]) for i in report["items"]] == [(run["chat_id"], 2)]
    assert Decimal(str(report["total_cost_usd"])) == spent
    export = (await http.get("/api/v1/usage/export", headers=headers)).text.strip().splitlines()
    assert len(export) == 3 and all(run["run_id"] in line for line in export[1:])
    with psycopg.connect(admin_url) as conn:
        assert conn.execute("SELECT count(*) FROM runs WHERE id = %s", [run["run_id"]]).fetchone() == (0,)


@pytest.fixture
def gated_tool() -> Iterator[None]:
    def wire_money(amount: int) -> str:
        return f"sent {amount}"

    register_tool(ToolDef("wire_money", wire_money, "Send money.", acts=True, requires_approval=True))
    yield
    unregister_tool("wire_money")


async def wants_approval(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    yield {0: DeltaToolCall(name="wire_money", json_args='{"amount": 5}', tool_call_id="w1")}


async def test_the_approval_audit_outlives_the_chat(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, gated_tool: None
) -> None:
    from personal_agent.lifecycle.launch import LaunchRequest, launch_run

    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    with scripted_model(wants_approval) as (model, _):
        spec = await launch_run(
            LaunchRequest(tenant.org_id, tenant.user_id, chat["id"], "pay the invoice", model, tools=("wire_money",))
        )
        frames: list[Any] = []
        while not any(f.data.get("name") == "approval_requested" for f in frames):  # the run waits for a person
            frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers, limit=len(frames) + 1)
    approval_id = next(f for f in frames if f.data.get("name") == "approval_requested").data["value"]["approval_id"]
    assert (await http.delete(f"/api/v1/chats/{chat['id']}", headers=headers)).status_code == 204
    with psycopg.connect(admin_url, autocommit=True) as conn:
        actions = conn.execute("SELECT action FROM approval_audit WHERE approval_id = %s", [approval_id]).fetchall()
        assert actions == [("requested",)]
        assert conn.execute("SELECT count(*) FROM approvals WHERE id = %s", [approval_id]).fetchone() == (0,)
        context = conn.execute(
            "SELECT run_id, chat_id::text, tool_name FROM approval_audit WHERE approval_id = %s", [approval_id]
        ).fetchone()
        assert context == (spec.run_id, chat["id"], "wire_money")  # it still says what it was about
        for change in ("UPDATE approval_audit SET action = 'approved'", "DELETE FROM approval_audit"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="approval_audit is append-only"):
                conn.execute(f"{change} WHERE approval_id = %s", [approval_id])


async def test_a_run_whose_chat_is_deleted_mid_run_still_records_its_usage(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()

    def delete_chat() -> None:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute("DELETE FROM chats WHERE id = %s", [chat["id"]])

    async def deleted_while_answering(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        yield "Half an "
        await asyncio.to_thread(delete_chat)  # the chat (and, by cascade, the run) goes while the model answers
        yield "answer."

    from personal_agent.lifecycle.launch import LaunchRequest, launch_run
    from personal_agent.lifecycle.local_drives import wait_for_local_runs

    with scripted_model(deleted_while_answering, model_name="gpt-4o-mini") as (model, recorder):
        spec = await launch_run(
            LaunchRequest(org_id=tenant.org_id, user_id=tenant.user_id, chat_id=chat["id"], message="hi", model=model)
        )
        await wait_for_local_runs()  # the inline run is a task on this loop
    assert recorder.calls == [1]
    with psycopg.connect(admin_url) as conn:
        assert conn.execute("SELECT count(*) FROM runs WHERE id = %s", [spec.run_id]).fetchone() == (0,)
        rows = conn.execute(
            "SELECT request_index, user_id, chat_id::text, cost_usd > 0 FROM usage_records WHERE run_id = %s",
            [spec.run_id],
        ).fetchall()
    assert rows == [(0, tenant.user_id, chat["id"], True)]


async def test_usage_rows_are_append_only_until_the_org_goes(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(text_then_tool(rounds=0), model_name="gpt-4o-mini") as (model, _):
        run = await start_run(http, headers, model)
        await read_events(http, run["events_url"], headers)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for change in ("UPDATE usage_records SET cost_usd = 0", "DELETE FROM usage_records"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="usage_records is append-only"):
                conn.execute(f"{change} WHERE run_id = %s", [run["run_id"]])
        conn.execute("DELETE FROM orgs WHERE id = %s", [tenant.org_id])  # offboarding the org takes its ledger
        left = conn.execute("SELECT count(*) FROM usage_records WHERE org_id = %s", [tenant.org_id]).fetchone()
    assert left == (0,)
