"""Cancelling a run from the API function on AWS, which has no engine (its layer leaves pydantic-ai out): the flag
is set and the driver stopped there, and the run worker finishes the cancel — it ends the run nobody advances (one
waiting for an approval here) with the cancelled outcome. Before, the API function imported the engine to do it and
failed with an ImportError on AWS; locally everything is installed, so only a test that takes the engine away
sees it."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import httpx
import pytest

from personal_agent.db import org_transaction
from personal_agent.lifecycle import drivers
from personal_agent.runs import store
from tests.approval_events import approval_requested
from tests.auth import auth_headers
from tests.email_tool import email_script, launch_email_run
from tests.scripted import scripted_model
from tests.sse import read_events


async def test_the_api_without_the_engine_hands_the_cancel_of_a_waiting_run_to_the_run_worker(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(email_script) as (model, _):
        spec = await launch_email_run(http, tenant, model, mode="inline")
        await approval_requested(http, headers, spec.run_id)
        invoked: list[dict[str, Any]] = []
        monkeypatch.setattr(drivers, "has_engine", lambda: False)
        monkeypatch.setattr(drivers, "invoke_worker", invoked.append)
        cancelled = await http.post(f"/api/v1/runs/{spec.run_id}/cancel", headers=headers)
        assert cancelled.status_code == 202 and cancelled.json()["status"] == "cancelling"
        assert invoked == [
            {"run_id": str(spec.run_id), "org_id": str(spec.org_id), "cancel": {"idle": True, "sub_agent": False}}
        ]
        async with org_transaction(spec.org_id) as conn:
            row = await store.get_run(conn, spec.run_id)
        assert row is not None and row.status == "waiting" and row.cancel_requested  # the API ended nothing

        monkeypatch.undo()  # the run worker has the engine
        payload = json.loads(json.dumps(invoked[0]))  # as Lambda hands it over
        done = await drivers.cancel_invocation(UUID(payload["run_id"]), UUID(payload["org_id"]), payload["cancel"])
        assert done["status"] == "cancelled"
        frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
        assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"]["type"] == "cancelled"
    assert email_tool == []
