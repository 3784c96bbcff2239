"""A round of sub-agents survives its driver dying between the parent's checkpoint and storing the children.

The engine stores no run: it checkpoints the parent (`awaiting_children`) and hands the round's child specs to the
lifecycle, which stores them through the launch chokepoint. A driver that dies in between leaves the parent
`running` with that checkpoint and no children; the recovery sweep hands the parent back, its drive gets the same
round again (rebuilt from the checkpoint) and stores the missing children once: never twice, however often the
step is retried or the sweep runs.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from personal_agent.engine.runner import advance
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.lifecycle.local_drives import stop_local_runs, wait_for_local_runs
from personal_agent.lifecycle.recovery import recover_unattended
from personal_agent.subagents.specs import child_run_id
from tests.auth import auth_headers
from tests.scripted import scripted_model
from tests.sse import read_events
from tests.subagents import delegating, run_rows, sleepers, user_text

TASK = "split this in two"


def _parent(admin_url: str, run_id: Any) -> tuple[str, str]:
    """The parent's status and the kind of its latest checkpoint."""
    with psycopg.connect(admin_url) as conn:
        row = conn.execute(
            "SELECT r.status, (SELECT kind FROM run_checkpoints c WHERE c.run_id = r.id ORDER BY seq DESC LIMIT 1)"
            " FROM runs r WHERE r.id = %s",
            [str(run_id)],
        ).fetchone()
    assert row is not None
    return row[0], row[1]


async def test_children_a_dead_driver_did_not_store_are_stored_once_when_the_parent_resumes(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    tree = delegating(sleepers(0.1, 0.2))
    asking, stopped = asyncio.Event(), False

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if user_text(messages) == TASK and not stopped:
            asking.set()
            await asyncio.Event().wait()  # the first driver is stopped while the parent's model is asked
        async for item in tree(messages, info):
            yield item

    with scripted_model(script) as (model, _):
        request = LaunchRequest(
            tenant.org_id, tenant.user_id, uuid.UUID(chat["id"]), TASK, model=model, mode="inline", tools=("delegate",)
        )
        spec = await launch_run(request)
        await asking.wait()
        await stop_local_runs()  # its lease released: the sweep may hand it back
        stopped = True

        # What a driver that died right after the engine's step leaves: the checkpoint, and no child stored.
        outcome = await advance(spec.run_id, spec.org_id)
        ids = [str(child_run_id(spec.run_id, f"d{i}")) for i in range(2)]
        assert (outcome.status, outcome.child_ids) == ("delegating", ids)
        assert _parent(admin_url, spec.run_id) == ("running", "awaiting_children")
        assert run_rows(admin_url, spec.run_id) == []
        retried = await advance(spec.run_id, spec.org_id)  # a retried step hands back the same round
        assert retried.children == outcome.children and run_rows(admin_url, spec.run_id) == []

        assert spec.run_id in await recover_unattended()
        await wait_for_local_runs()
        assert spec.run_id not in await recover_unattended()  # nothing left to hand back
        await wait_for_local_runs()

    children = run_rows(admin_url, spec.run_id)
    assert [str(c["id"]) for c in children] == ids and [c["status"] for c in children] == ["succeeded"] * 2
    assert [c["spec"] for c in children] == [child.model_dump(mode="json") for child in outcome.children]
    frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers)
    started = [f.data["value"]["child_run_id"] for f in frames if f.data.get("name") == "subagent_started"]
    assert started == ids  # each announced once, when it was stored
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    text = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert "slept 0.1" in text and "slept 0.2" in text
    assert _parent(admin_url, spec.run_id)[0] == "succeeded"
