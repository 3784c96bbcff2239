"""E-mail outputs only to the org's people (issue 28, item 11): a workflow's results may be e-mailed to an active
member's own address (the one their identity provider gave) or to an address in a domain an org admin allowed,
nowhere else: refused when the output is saved (422 `email_not_allowed`) and again at send, so a member who was
removed stops getting the org's results (SES, moto's, receives nothing)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import httpx

from personal_agent.workflows.output_delivery_store import TakenDelivery
from personal_agent.workflows.output_store import Output
from personal_agent.workflows.output_targets import EMAIL_NOT_ALLOWED, send_to
from tests import db_state
from tests.auth import auth_headers
from tests.ses_outbox import sent_to
from tests.workflows import create_workflow

SETTINGS = {"tier_floor": 0, "confidence_threshold": 0.8}


async def _add(http: httpx.AsyncClient, headers: dict[str, str], workflow_id: str, email: str) -> httpx.Response:
    body = {"kind": "email", "email": email}
    return await http.post(f"/api/v1/workflows/{workflow_id}/outputs", json=body, headers=headers)


async def test_an_email_output_goes_to_members_and_allowed_domains_only(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    workflow = await create_workflow(http, headers)
    member = f"{tenant.subject}@example.test"
    assert (await _add(http, headers, workflow["id"], member.upper())).status_code == 201  # the member's own
    for outsider in ("exfil@attacker.net", "ops@partner.example", "x@example.test"):
        refused = await _add(http, headers, workflow["id"], outsider)
        assert (refused.status_code, refused.json()["code"]) == (422, "email_not_allowed"), refused.text

    put = await http.put(
        "/api/v1/admin/settings", json={**SETTINGS, "output_email_domains": ["partner.example"]}, headers=headers
    )
    assert put.status_code == 200 and put.json()["output_email_domains"] == ["partner.example"], put.text
    assert (await http.put("/api/v1/admin/settings", json=SETTINGS, headers=headers)).json()[
        "output_email_domains"
    ] == ["partner.example"]  # left out: unchanged
    assert (await _add(http, headers, workflow["id"], "ops@partner.example")).status_code == 201
    sub = await _add(http, headers, workflow["id"], "ops@evil.partner.example")
    assert (sub.status_code, sub.json()["code"]) == (422, "email_not_allowed")  # the domain exactly, no subdomain
    bad = await http.put("/api/v1/admin/settings", json={**SETTINGS, "output_email_domains": ["@x"]}, headers=headers)
    assert bad.status_code == 422


async def test_a_removed_member_gets_no_more_mail(http: httpx.AsyncClient, make_tenant: Any, admin_url: str) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    workflow = await create_workflow(http, headers)
    inbox = f"{tenant.subject}@example.test"
    added = (await _add(http, headers, workflow["id"], inbox)).json()
    output = Output(
        id=uuid.UUID(added["id"]),
        workflow_id=uuid.UUID(added["workflow_id"]),
        kind=added["kind"],
        target_hint=added["target_hint"],
        email=added["email"],
        events=added["events"],
        enabled=added["enabled"],
        created_at=datetime.fromisoformat(added["created_at"]),
    )
    delivery = TakenDelivery(
        id=uuid.uuid4(),
        org_id=tenant.org_id,
        workflow_id=output.workflow_id,
        output_id=output.id,
        event="run.finished",
        event_key="r",
        payload={"type": "run.finished", "data": {"status": "succeeded", "output": "the numbers", "run_url": "/r"}},
        status="pending",
        attempts=0,
    )
    assert (await send_to(tenant.org_id, delivery, output, None)).ok
    db_state.set_membership_elsewhere(admin_url, tenant.org_id, tenant.user_id, "removed")
    refused = await send_to(tenant.org_id, delivery, output, None)
    assert (refused.ok, refused.error) == (False, EMAIL_NOT_ALLOWED)
    assert len(sent_to(inbox)) == 1
