"""The admin routes the web console adds: change a model (enabled, tags, quality, prices) and switch a provider,
budgets with this month's spend against their cap, and the approval audit trail. Org admins only."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.auth import auth_headers
from tests.email_tool import email_script
from tests.runs import follow_approving, start_run
from tests.scripted import scripted_model
from tests.sse import read_events


async def test_an_admin_changes_a_model_and_switches_a_provider_off(
    client: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    body = {"name": "lab", "kind": "openai-compatible", "base_url": "http://127.0.0.1:9/v1", "trust_tier": 2}
    provider = (await client.post("/api/v1/admin/providers", json=body, headers=headers)).json()
    model = (
        await client.post(f"/api/v1/admin/providers/{provider['id']}/models", json={"name": "lab-1"}, headers=headers)
    ).json()
    url = f"/api/v1/admin/providers/{provider['id']}/models/{model['id']}"

    changed = await client.patch(
        url,
        json={"enabled": False, "tags": ["coding", "cheap"], "quality": 17, "input_price": "0.5", "output_price": 2},
        headers=headers,
    )
    assert changed.status_code == 200, changed.text
    listed = (await client.get("/api/v1/admin/providers", headers=headers)).json()["items"]
    [stored] = [m for p in listed for m in p["models"] if m["id"] == model["id"]]
    assert (stored["enabled"], stored["tags"], stored["quality"], stored["input_price"], stored["output_price"]) == (
        False,
        ["coding", "cheap"],
        17,
        0.5,
        2.0,
    )
    reset = await client.patch(url, json={"input_price": None}, headers=headers)  # back to genai-prices
    assert reset.json()["input_price"] is None and reset.json()["output_price"] == 2.0

    bad_bodies = (
        ({"quality": 99}, "invalid_input"),
        ({}, "empty_update"),
        ({"tags": ["nope"]}, None),
        ({"enabled": None, "quality": 0}, "null_not_allowed"),  # found by the fuzz test: was a 500
    )
    for bad, code in bad_bodies:
        refused = await client.patch(url, json=bad, headers=headers)
        assert refused.status_code == 422, refused.text
        assert code is None or refused.json()["code"] == code
    assert (
        await client.patch(
            f"/api/v1/admin/providers/{provider['id']}/models/{uuid.uuid4()}", json={"quality": 1}, headers=headers
        )
    ).status_code == 404

    off = await client.patch(f"/api/v1/admin/providers/{provider['id']}", json={"enabled": False}, headers=headers)
    assert off.status_code == 200 and off.json()["enabled"] is False and off.json()["models"][0]["name"] == "lab-1"

    member = auth_headers(tenant, roles=("user",))
    assert (await client.patch(url, json={"quality": 1}, headers=member)).status_code == 403
    assert (await client.get("/api/v1/admin/approval-audit", headers=member)).status_code == 403


async def test_budget_spend_counts_this_months_usage_against_each_cap(
    http: httpx.AsyncClient, make_tenant: Any, echo_model: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    assert (
        await http.put("/api/v1/admin/budgets", json={"scope": "org", "monthly_usd": "25"}, headers=headers)
    ).status_code == 200
    before = (await http.get("/api/v1/admin/budget-spend", headers=headers)).json()["items"]
    assert [(b["scope"], b["monthly_usd"], b["spent_usd"]) for b in before] == [("org", 25.0, 0.0)]

    run = await start_run(http, headers, echo_model, message="count me")
    frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED"
    [after] = (await http.get("/api/v1/admin/budget-spend", headers=headers)).json()["items"]
    assert 0 < after["spent_usd"] < 25 and after["month_start"].endswith("T00:00:00Z")


async def test_the_approval_audit_shows_requests_and_decisions_newest_first(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]]
) -> None:
    from personal_agent.lifecycle.launch import LaunchRequest, launch_run

    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    chat = (await http.post("/api/v1/chats", json={"title": "audit"}, headers=headers)).json()
    with scripted_model(email_script) as (model, _):
        spec = await launch_run(
            LaunchRequest(
                org_id=tenant.org_id,
                user_id=tenant.user_id,
                chat_id=uuid.UUID(chat["id"]),
                message="mail bob",
                model=model,
                tools=("send_email",),
                mode="inline",
            )
        )
        _, asked = await follow_approving(http, f"/api/v1/runs/{spec.run_id}/events", headers, lambda: None)
    assert asked and email_tool == [{"to": "bob@example.com", "subject": "hi"}]

    page = (await http.get("/api/v1/admin/approval-audit", headers=headers)).json()
    assert [(e["action"], e["tool_name"], e["status"]) for e in page["items"]] == [
        ("approved", "send_email", "approved"),
        ("requested", "send_email", "approved"),
    ]
    assert page["items"][0]["actor_id"] == str(tenant.user_id) and page["items"][1]["actor_id"] is None
    first = (await http.get("/api/v1/admin/approval-audit", params={"limit": 1}, headers=headers)).json()
    rest = (
        await http.get("/api/v1/admin/approval-audit", params={"cursor": first["next_cursor"]}, headers=headers)
    ).json()
    assert [e["id"] for e in first["items"] + rest["items"]] == [e["id"] for e in page["items"]]
    assert (await http.get("/api/v1/admin/approval-audit", params={"cursor": "x"}, headers=headers)).json()[
        "code"
    ] == "invalid_cursor"
    other = auth_headers(make_tenant(roles=("org-admin",)), roles=("org-admin",))
    assert (await http.get("/api/v1/admin/approval-audit", headers=other)).json()["items"] == []
