"""Which cap applies: the most restrictive of the user's, the org's and the platform's; unpriced usage
counts at the configured conservative price; a cap for someone who is not a member is refused."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import psycopg
import pytest

from tests.auth import auth_headers
from tests.scripted import scripted_model, text_then_tool
from tests.sse import read_events


async def _spend(http: httpx.AsyncClient, headers: dict[str, str]) -> None:
    """Spend a little: one priced request of the tenant's user."""
    with scripted_model(text_then_tool(rounds=0), model_name="gpt-4o-mini") as (model, _):
        started = await _launch(http, headers, model)
        assert started.status_code == 202, started.text
        assert (await read_events(http, started.json()["events_url"], headers))[-1].type == "RUN_FINISHED"


async def _caps(http: httpx.AsyncClient, tenant: Any, headers: dict[str, str], org: str, user: str) -> None:
    for body in (
        {"scope": "org", "monthly_usd": org},
        {"scope": "user", "user_id": str(tenant.user_id), "monthly_usd": user},
    ):
        assert (await http.put("/api/v1/admin/budgets", json=body, headers=headers)).status_code == 200


async def _launch(http: httpx.AsyncClient, headers: dict[str, str], model: str) -> httpx.Response:
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    return await http.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi", "model": model}, headers=headers)


@pytest.fixture
def platform_cap() -> Iterator[Callable[[str], None]]:
    """Sets PA_PLATFORM_MONTHLY_BUDGET_USD for the rest of the test."""
    from personal_agent.settings import get_settings

    def cap(usd: str) -> None:
        os.environ["PA_PLATFORM_MONTHLY_BUDGET_USD"] = usd
        get_settings.cache_clear()

    yield cap
    os.environ.pop("PA_PLATFORM_MONTHLY_BUDGET_USD", None)
    get_settings.cache_clear()


async def test_an_org_cap_applies_even_when_the_users_own_cap_is_larger(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    await _spend(http, headers)
    await _caps(http, tenant, headers, org="0.000001", user="100")
    with scripted_model(text_then_tool(rounds=0)) as (model, recorder):
        refused = await _launch(http, headers, model)
    assert recorder.calls == []
    assert (refused.status_code, refused.json()["code"], refused.json()["details"]["cap"]) == (
        429,
        "budget_exceeded",
        "org",
    )


async def test_the_platform_cap_applies_whatever_the_org_allows(
    http: httpx.AsyncClient, make_tenant: Any, platform_cap: Callable[[str], None]
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    await _spend(http, headers)  # every org's spend counts against the platform's cap
    await _caps(http, tenant, headers, org="1000", user="1000")
    platform_cap("0.000001")
    with scripted_model(text_then_tool(rounds=0)) as (model, recorder):
        refused = await _launch(http, headers, model)
    assert recorder.calls == []
    assert (refused.status_code, refused.json()["details"]["cap"]) == (429, "platform")


async def test_unpriced_usage_counts_at_the_conservative_price(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    await http.put("/api/v1/admin/budgets", json={"scope": "org", "monthly_usd": "0.001"}, headers=headers)
    with scripted_model(text_then_tool(rounds=0)) as (model, _):  # a model nobody can price
        first = await _launch(http, headers, model)  # nothing spent: admitted
        assert first.status_code == 202, first.text
        frames = await read_events(http, first.json()["events_url"], headers)
        assert frames[-1].type == "RUN_FINISHED"
        refused = await _launch(http, headers, model)
    with psycopg.connect(admin_url) as conn:
        cost, tokens = conn.execute(
            "SELECT cost_usd, input_tokens + output_tokens FROM usage_records WHERE run_id = %s",
            [first.json()["run_id"]],
        ).fetchone()
    assert cost is None and tokens * 75 / 1_000_000 >= 0.001  # unknown in the ledger, 75 USD/Mtok for budgets
    assert (refused.status_code, refused.json()["code"]) == (429, "budget_exceeded")
    assert refused.json()["details"]["spent_usd"] == pytest.approx(tokens * 75 / 1_000_000)
    report = (await http.get("/api/v1/usage", headers=headers)).json()
    assert report["unpriced_requests"] == 1 and report["total_cost_usd"] == 0  # the report still says unknown


async def test_a_budget_for_someone_outside_the_org_is_refused_and_not_stored(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant, stranger = make_tenant(roles=("org-admin",)), make_tenant()
    headers = auth_headers(tenant, roles=("org-admin",))
    for user_id in (uuid.uuid4(), stranger.user_id):
        refused = await http.put(
            "/api/v1/admin/budgets",
            json={"scope": "user", "user_id": str(user_id), "monthly_usd": "5"},
            headers=headers,
        )
        assert (refused.status_code, refused.json()["code"]) == (404, "user_not_found")
    assert (await http.get("/api/v1/admin/budgets", headers=headers)).json()["items"] == []
