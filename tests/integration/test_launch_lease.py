"""A run this process drives is stored already leased to its driver (one transaction less per run): from the
moment it exists nobody else can take it, its drive is its first (`attempts` 1, no `run_resumed`), and the lease
is released when it ends."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
from psycopg.rows import dict_row
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from personal_agent.lifecycle.lease import RunLease, host_prefix
from tests.auth import auth_headers
from tests.runs import start_run
from tests.scripted import scripted_model
from tests.sse import read_events


def _lease(admin_url: str, run_id: str) -> dict[str, Any]:
    with psycopg.connect(admin_url, autocommit=True, row_factory=dict_row) as conn:
        row = conn.execute("SELECT status, lease_owner, attempts FROM runs WHERE id = %s", [run_id]).fetchone()
    assert row is not None
    return row


async def _released(admin_url: str, run_id: str, seconds: float = 10) -> dict[str, Any]:
    """The run's lease once its driver let it go: the drive releases it after the run's end, which a client may see
    first (the terminal event goes out as soon as the end is stored); nothing announces the release itself."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (row := _lease(admin_url, run_id))["lease_owner"] is not None and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return row


async def test_a_launched_inline_run_is_leased_to_its_driver_until_it_ends(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    looked = asyncio.Event()

    async def answer_once_looked_at(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        await looked.wait()
        yield "done"

    with scripted_model(answer_once_looked_at) as (model, _):
        run = await start_run(http, headers, model)
        held = _lease(admin_url, run["run_id"])
        assert held["lease_owner"].startswith(f"{host_prefix()}{os.getpid()}:")
        assert held["attempts"] == 1 and held["status"] in ("queued", "running")
        other = RunLease(uuid.UUID(run["run_id"]), uuid.UUID(str(tenant.org_id)), "someone-else", 30.0)
        assert await other.take() is None  # the run has its driver from the moment it exists
        looked.set()
        frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED"
    assert not [f for f in frames if f.type == "CUSTOM" and f.data.get("name") == "run_resumed"]
    ended = await _released(admin_url, run["run_id"])
    assert (ended["status"], ended["lease_owner"], ended["attempts"]) == ("succeeded", None, 0)
