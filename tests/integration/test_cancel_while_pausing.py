"""A Stop that lands while a run begins to wait for an approval still ends it, with a terminal event.

The cancel finds the run `running` and leaves its end to the engine; the engine, past its last check of the flag,
stores the wait. Before, the run was then left `waiting` with its cancel flag set (a durable run's execution
already stopped), and its stream never got a terminal event. The window is held open exactly: the test holds an
uncommitted checkpoint row with the key the pause writes, so the engine waits on it, and lets it go once the
cancel has answered.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import psycopg
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.lifecycle.local_drives import wait_for_local_runs
from personal_agent.tools.registry import ToolDef, register_tool, unregister_tool
from tests.auth import auth_headers
from tests.scripted import scripted_model
from tests.sse import read_events

PAUSE_SEQ = 2  # checkpoints: 0 start, 1 the response asking for the tool, 2 the wait for its approval


@pytest.fixture
def guarded_tool() -> Iterator[str]:
    register_tool(ToolDef("guarded_echo", lambda text: text, "Echo, once a person approved.", requires_approval=True))
    yield "guarded_echo"
    unregister_tool("guarded_echo")


async def _blocked_on_pause(admin_url: str, deadline: float = 30.0) -> None:
    """Until the engine's pause waits on the held checkpoint row."""
    ends = time.monotonic() + deadline
    with psycopg.connect(admin_url, autocommit=True) as conn:
        while time.monotonic() < ends:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND query LIKE 'INSERT INTO run_checkpoints%%'"
            ).fetchone()
            if row and row[0]:
                return
            await asyncio.sleep(0.05)
    raise AssertionError("the run never reached its pause")


async def test_a_stop_while_the_run_begins_to_wait_ends_it_with_a_terminal_event(
    client: httpx.AsyncClient, http: httpx.AsyncClient, make_tenant: Any, admin_url: str, guarded_tool: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await client.post("/api/v1/chats", json={}, headers=headers)).json()
    run_id = uuid.uuid4()
    asked = asyncio.Event()

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        await asked.wait()
        yield {0: DeltaToolCall(name=guarded_tool, json_args='{"text": "hi"}', tool_call_id="call_0")}

    with scripted_model(script) as (model, _), psycopg.connect(admin_url) as held:
        await launch_run(
            LaunchRequest(
                org_id=tenant.org_id,
                user_id=tenant.user_id,
                chat_id=uuid.UUID(chat["id"]),
                message="echo hi",
                model=model,
                mode="inline",
                tools=(guarded_tool,),
                run_id=run_id,
            )
        )
        held.execute(
            "INSERT INTO run_checkpoints (run_id, seq, org_id, kind, messages, state)"
            " VALUES (%s, %s, %s, 'held', '[]', '{}')",
            [run_id, PAUSE_SEQ, tenant.org_id],
        )
        asked.set()
        await _blocked_on_pause(admin_url)
        cancel = await client.post(f"/api/v1/runs/{run_id}/cancel", headers=headers)
        assert cancel.status_code == 202 and cancel.json()["cancelled"] is True, cancel.text
        held.rollback()  # the engine's pause goes on: the wait is stored after the Stop
        await wait_for_local_runs()

    with psycopg.connect(admin_url) as conn:
        status = conn.execute("SELECT status FROM runs WHERE id = %s", [run_id]).fetchone()
    assert status == ("cancelled",)
    frames = await read_events(http, f"/api/v1/runs/{run_id}/events", headers)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "cancelled"}
    assert [f.data.get("name") for f in frames].count("run_cancelled") == 1


@pytest.fixture
def stop_then_crash(live_url: str) -> Iterator[dict[str, Any]]:
    """A tool that stops its own run through the API (as its owner would, in another tab) and then crashes."""
    seen: dict[str, Any] = {}

    def crash(text: str) -> str:
        stopped = httpx.post(f"{live_url}/api/v1/runs/{seen['run_id']}/cancel", headers=seen["headers"], timeout=30)
        seen["cancel"] = stopped.status_code
        raise RuntimeError("the tool crashed")

    register_tool(ToolDef("stop_then_crash", crash, "Stop the run, then crash."))
    yield seen
    unregister_tool("stop_then_crash")


async def test_a_durable_step_that_fails_after_a_stop_ends_the_run_cancelled(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, stop_then_crash: dict[str, Any]
) -> None:
    """The Stop stopped the execution while its Task ran; the Task then failed. Before, nothing ended the run (no
    retry, no failure step in a stopped execution): it stayed `running` with no terminal event."""
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    run_id = uuid.uuid4()
    stop_then_crash.update(run_id=run_id, headers=headers)

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        yield {0: DeltaToolCall(name="stop_then_crash", json_args='{"text": "x"}', tool_call_id="call_0")}

    with scripted_model(script) as (model, _):
        await launch_run(
            LaunchRequest(
                org_id=tenant.org_id,
                user_id=tenant.user_id,
                chat_id=uuid.UUID(chat["id"]),
                message="stop",
                model=model,
                mode="durable",
                tools=("stop_then_crash",),
                run_id=run_id,
            )
        )
        status = await _terminal_status(admin_url, run_id)
    assert stop_then_crash["cancel"] == 202
    assert status == "cancelled"
    frames = await read_events(http, f"/api/v1/runs/{run_id}/events", headers)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "cancelled"}


async def _terminal_status(admin_url: str, run_id: uuid.UUID, deadline: float = 60.0) -> str | None:
    """The run's status once it ended, or its status at the deadline."""
    ends = time.monotonic() + deadline
    with psycopg.connect(admin_url, autocommit=True) as conn:
        while True:
            row = conn.execute("SELECT status FROM runs WHERE id = %s", [run_id]).fetchone()
            status = row[0] if row else None
            if status in ("succeeded", "failed", "cancelled") or time.monotonic() > ends:
                return status
            await asyncio.sleep(0.1)
