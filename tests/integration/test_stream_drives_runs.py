"""One Lambda per streamed turn (issue 35, item 2), with inline runs driven as on AWS (`PA_INLINE_DRIVER=worker`:
the run worker Lambda, through the local Lambda dispatch): a run started with its events in the response is driven
by the process answering that request (lease owner `stream:…`), not by the run worker while the response waits;
its client going away does not stop it. Runs started without a stream, or with `PA_STREAM_DRIVES_RUNS` off, go to
the run worker (lease owner `lambda:…`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import psycopg
import pytest
from psycopg.rows import dict_row
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.scripted import scripted_model
from tests.sse import read_events, response_frames


def _run(admin_url: str, run_id: str) -> dict[str, Any]:
    with psycopg.connect(admin_url, autocommit=True, row_factory=dict_row) as conn:
        row = conn.execute("SELECT status, lease_owner, attempts FROM runs WHERE id = %s", [run_id]).fetchone()
    assert row is not None
    return row


async def _released(admin_url: str, run_id: str, seconds: float = 20) -> dict[str, Any]:
    """The run once its driver let its lease go (after its end, which a client may see first)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (row := _run(admin_url, run_id))["lease_owner"] is not None and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return row


class Gate:
    """A model that says "Thinking", then waits (on any thread's loop) until the test opens the gate."""

    def __init__(self) -> None:
        self.opened = threading.Event()

    async def script(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "Thinking "
        await asyncio.to_thread(self.opened.wait, 30)
        yield "done."


@pytest.fixture
def worker_driver(monkeypatch: Any) -> Iterator[None]:
    monkeypatch.setattr(get_settings(), "inline_driver", "worker")
    yield


async def _new_chat(http: httpx.AsyncClient, headers: dict[str, str]) -> str:
    return str((await http.post("/api/v1/chats", json={}, headers=headers)).json()["id"])


async def _stream_until_text(
    http: httpx.AsyncClient, headers: dict[str, str], chat_id: str, model: str
) -> tuple[str, list[str]]:
    """POST runs/stream, read until the first text, then drop the connection: (run id, frame types seen)."""
    body = {"message": "hi", "model": model, "mode": "inline"}
    async with http.stream("POST", f"/api/v1/chats/{chat_id}/runs/stream", json=body, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        frames = await response_frames(response, limit=4)  # RUN_STARTED, STEP_STARTED, TEXT_MESSAGE_START, text
        return response.headers["x-run-id"], [f.type for f in frames]


@pytest.mark.usefixtures("worker_driver")
async def test_a_streamed_run_is_driven_by_the_process_answering_it_and_outlives_its_client(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    headers = auth_headers(make_tenant())
    gate = Gate()
    with scripted_model(gate.script) as (model, _):
        run_id, seen = await _stream_until_text(http, headers, await _new_chat(http, headers), model)
        assert seen[-1] == "TEXT_MESSAGE_CONTENT"
        held = _run(admin_url, run_id)
        assert held["lease_owner"].startswith("stream:") and held["attempts"] == 1  # not the run worker's
        gate.opened.set()  # the client is gone; the run goes on
        frames = await read_events(http, f"/api/v1/runs/{run_id}/events", headers)
    assert frames[-1].type == "RUN_FINISHED"
    assert "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT") == "Thinking done."
    ended = await _released(admin_url, run_id)
    assert (ended["status"], ended["lease_owner"], ended["attempts"]) == ("succeeded", None, 0)


@pytest.mark.usefixtures("worker_driver")
async def test_the_run_worker_drives_runs_not_streamed_and_streamed_ones_when_the_setting_is_off(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, monkeypatch: Any
) -> None:
    headers = auth_headers(make_tenant())
    gate = Gate()
    with scripted_model(gate.script) as (model, _):
        body = {"message": "hi", "model": model, "mode": "inline"}
        started = await http.post(f"/api/v1/chats/{await _new_chat(http, headers)}/runs", json=body, headers=headers)
        assert started.status_code == 202, started.text
        posted = started.json()["run_id"]
        head = await read_events(http, started.json()["events_url"], headers, limit=4)
        assert head[-1].type == "TEXT_MESSAGE_CONTENT"
        assert _run(admin_url, posted)["lease_owner"].startswith("lambda:")

        monkeypatch.setattr(get_settings(), "stream_drives_runs", False)
        streamed, seen = await _stream_until_text(http, headers, await _new_chat(http, headers), model)
        assert seen[-1] == "TEXT_MESSAGE_CONTENT"
        assert _run(admin_url, streamed)["lease_owner"].startswith("lambda:")
        gate.opened.set()
        for run_id in (posted, streamed):
            frames = await read_events(http, f"/api/v1/runs/{run_id}/events", headers)
            assert frames[-1].type == "RUN_FINISHED"
            assert (await _released(admin_url, run_id))["status"] == "succeeded"
