"""An approval outlives nothing (issue 28, item 11): when its run ends — cancelled here — the approvals it still
waited on become `expired`, audited so; approving one afterwards is 409 `approval_expired`, the tool never runs, and
the audit trail never says "approved"."""

from __future__ import annotations

from typing import Any

import httpx
import psycopg

from personal_agent.approvals.store import RUN_ENDED_REASON
from tests import db_state
from tests.approval_events import approval_requested
from tests.auth import auth_headers
from tests.email_tool import email_script, launch_email_run
from tests.scripted import scripted_model
from tests.sse import read_events


def _approval(admin_url: str, approval_id: str) -> tuple[Any, ...]:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT status, reason, decided_by FROM approvals WHERE id = %s", [approval_id]).fetchone()
        audit = conn.execute(
            "SELECT action FROM approval_audit WHERE approval_id = %s ORDER BY id", [approval_id]
        ).fetchall()
    assert row is not None
    return (*row, [a[0] for a in audit])


async def test_approving_after_the_run_was_cancelled_is_409_and_nothing_runs(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]]
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model, mode="inline")
        approval_id = (await approval_requested(http, headers, spec.run_id)).data["value"]["approval_id"]
        cancelled = await http.post(f"/api/v1/runs/{spec.run_id}/cancel", headers=headers)
        assert cancelled.status_code == 202, cancelled.text
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
        assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"]["type"] == "cancelled"
        assert _approval(admin_url, approval_id) == ("expired", RUN_ENDED_REASON, None, ["requested", "expired"])

        late = await http.post(f"/api/v1/approvals/{approval_id}", json={"decision": "approve"}, headers=headers)
        assert (late.status_code, late.json()["code"]) == (409, "approval_expired")
        denied = await http.post(f"/api/v1/approvals/{approval_id}", json={"decision": "deny"}, headers=headers)
        assert (denied.status_code, denied.json()["code"]) == (409, "approval_expired")
    assert email_tool == []
    assert _approval(admin_url, approval_id) == ("expired", RUN_ENDED_REASON, None, ["requested", "expired"])
    listed = await http.get("/api/v1/approvals", params={"status": "pending"}, headers=headers)
    assert approval_id not in [a["id"] for a in listed.json()["items"]]


async def test_an_approval_left_pending_by_a_run_that_ended_cannot_be_approved(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, email_tool: list[dict[str, Any]]
) -> None:
    """A run ended behind the approvals' back (stored before this rule, or ended by a path that missed it): the
    decision itself sees the run is over, expires the approval and answers 409."""
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model, mode="inline")
        approval_id = (await approval_requested(http, headers, spec.run_id)).data["value"]["approval_id"]
        db_state.end_run_behind_its_back(admin_url, spec.run_id, "failed")
        late = await http.post(f"/api/v1/approvals/{approval_id}", json={"decision": "approve"}, headers=headers)
    assert (late.status_code, late.json()["code"]) == (409, "approval_expired")
    assert email_tool == []
    assert _approval(admin_url, approval_id) == ("expired", RUN_ENDED_REASON, None, ["requested", "expired"])
