"""Budgets hold under concurrency: each model request reserves its estimated cost before it is sent and
settles after, so concurrent runs overspend a cap by at most one request; a reservation is released when
its run is cancelled or fails, and one left by a dead worker expires."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import psycopg
import pytest
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai.models.function import AgentInfo

from personal_agent.governance.budgets import BudgetExceeded, reserve_request
from personal_agent.governance.pricing import request_estimate
from personal_agent.spec.run_spec import ModelRef, RunSpec
from tests import db_state
from tests.auth import auth_headers
from tests.scripted import scripted_model

PRICED = ModelRef(
    id="acme:m", provider="acme", kind="openai-compatible", tier=2, model_name="m", input_price=0.0, output_price=1.0
)
MESSAGES = [ModelRequest.user_text_prompt("hi")]


def _spec(tenant: Any, ref: ModelRef = PRICED) -> RunSpec:
    return RunSpec(
        run_id=uuid.uuid4(),
        org_id=tenant.org_id,
        user_id=tenant.user_id,
        chat_id=uuid.uuid4(),
        model=ref.id,
        model_chain=(ref,),
        instructions="",
        mode="inline",
    )


async def _org_cap(http: httpx.AsyncClient, tenant: Any, usd: str) -> dict[str, str]:
    headers = auth_headers(tenant, roles=("org-admin",))
    cap = await http.put("/api/v1/admin/budgets", json={"scope": "org", "monthly_usd": usd}, headers=headers)
    assert cap.status_code == 200, cap.text
    return headers


async def _admitted(specs: list[RunSpec]) -> int:
    results = await asyncio.gather(*(reserve_request(s, 0, MESSAGES) for s in specs), return_exceptions=True)
    assert all(r is None or isinstance(r, BudgetExceeded) for r in results), results
    return sum(r is None for r in results)


async def test_concurrent_reservations_admit_only_what_the_cap_leaves_room_for(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    estimate = request_estimate(_spec(tenant), MESSAGES)
    assert estimate == Decimal(16_384) / 1_000_000  # the whole output limit at $1 per million, input free
    await _org_cap(http, tenant, str(estimate * Decimal("2.5")))
    specs = [_spec(tenant) for _ in range(8)]
    assert await _admitted(specs) == 3  # admitted while spend + reservations < cap: 0, 1 and 2 estimates held
    with psycopg.connect(admin_url) as conn:
        (held,) = conn.execute(
            "SELECT sum(amount_usd) FROM budget_reservations WHERE org_id = %s", [tenant.org_id]
        ).fetchone()
    assert held - estimate * Decimal("2.5") <= estimate  # over the cap by at most one request


def gate(release: asyncio.Event, entered: asyncio.Queue[str]) -> Any:
    """A model that announces each request and answers only once released."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        entered.put_nowait("model")
        yield "Thinking"
        await release.wait()
        yield " done."

    return script


async def _launch(tenant: Any, http: httpx.AsyncClient, headers: dict[str, str], model: str) -> asyncio.Task[Any]:
    """Launch an inline run (its driver is a task on this loop, named for the run) and return that task."""
    from personal_agent.lifecycle.launch import LaunchRequest, launch_run

    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    spec = await launch_run(
        LaunchRequest(org_id=tenant.org_id, user_id=tenant.user_id, chat_id=chat["id"], message="hi", model=model)
    )
    (task,) = [t for t in asyncio.all_tasks() if t.get_name() == f"run-{spec.run_id}"]
    return task


async def test_concurrent_runs_send_one_request_when_one_fits(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = await _org_cap(http, tenant, "0.000001")
    release, entered = asyncio.Event(), asyncio.Queue[str]()
    with scripted_model(gate(release, entered), model_name="gpt-4o-mini") as (model, recorder):
        tasks, refused_at_launch = [], 0
        for _ in range(5):
            try:
                tasks.append(await _launch(tenant, http, headers, model))
            except BudgetExceeded:
                refused_at_launch += 1
        for task in tasks:
            task.add_done_callback(lambda _: entered.put_nowait("done"))
        for _ in tasks:  # each run either reached the model (and waits there) or was refused and ended
            await asyncio.wait_for(entered.get(), 60)
        release.set()
        await asyncio.gather(*tasks)
    assert len(recorder.calls) == 1
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute(
            "SELECT status, error->>'code' FROM runs WHERE org_id = %s ORDER BY status", [tenant.org_id]
        ).fetchall()
        (ledger,) = conn.execute("SELECT count(*) FROM usage_records WHERE org_id = %s", [tenant.org_id]).fetchone()
    assert rows.count(("succeeded", None)) == 1 and ledger == 1
    assert rows.count(("failed", "budget_exceeded")) + refused_at_launch == 4


@pytest.mark.parametrize("ending", ["cancel", "fail"])
async def test_a_run_holds_its_reservation_until_it_ends(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, ending: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = await _org_cap(http, tenant, "0.000001")
    release, entered = asyncio.Event(), asyncio.Queue[str]()

    async def answer_then_end(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        entered.put_nowait("model")
        yield "Thinking"
        await release.wait()
        if ending == "fail":
            raise UnexpectedModelBehavior("the model broke mid-answer")
        yield " more"

    with scripted_model(answer_then_end) as (model, _):
        first = await _launch(tenant, http, headers, model)
        await asyncio.wait_for(entered.get(), 60)  # in flight, holding its reservation
        chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
        from personal_agent.lifecycle.launch import LaunchRequest, launch_run

        with pytest.raises(BudgetExceeded):  # nothing is spent yet, but the request in flight is counted
            await launch_run(LaunchRequest(tenant.org_id, tenant.user_id, chat["id"], "hi", model=model))
        if ending == "cancel":
            run_id = first.get_name().removeprefix("run-")
            assert (await http.post(f"/api/v1/runs/{run_id}/cancel", headers=headers)).status_code == 202
        release.set()
        await first
        with psycopg.connect(admin_url) as conn:
            status = conn.execute("SELECT status FROM runs WHERE org_id = %s", [tenant.org_id]).fetchone()
            held = conn.execute(
                "SELECT count(*) FROM budget_reservations WHERE org_id = %s", [tenant.org_id]
            ).fetchone()
        assert status == ("cancelled" if ending == "cancel" else "failed",) and held == (0,)
        second = await _launch(tenant, http, headers, model)  # released: the next run is admitted
        release.set()
        await second
    with psycopg.connect(admin_url) as conn:
        assert conn.execute("SELECT count(*) FROM runs WHERE org_id = %s", [tenant.org_id]).fetchone() == (2,)


async def test_a_dead_workers_reservation_stops_counting_when_it_expires(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    await _org_cap(http, tenant, "0.000001")
    dead, alive = _spec(tenant), _spec(tenant)
    await reserve_request(dead, 0, MESSAGES)  # its worker dies before the response: never settled
    with pytest.raises(BudgetExceeded):
        await reserve_request(alive, 0, MESSAGES)
    db_state.expire_reservations(admin_url, dead.run_id)  # what PA_BUDGET_RESERVATION_TTL_SECONDS later sees
    await reserve_request(alive, 0, MESSAGES)
