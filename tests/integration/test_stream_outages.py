"""A run's event stream across a Valkey that dies and comes back (issue 41), on the real relay over HTTP: the client
keeps its connection (heartbeats meanwhile) and gets every event once, in order; a Valkey back without its data
gives it `resume_expired` and the end of the stream; an outage past `PA_DEPENDENCY_RETRY_SECONDS` gives it
`resume_expired` (`unavailable`), and a new `GET …/events` meanwhile answers 503 at once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from ag_ui.core import (
    BaseEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)

from personal_agent.bus import entry_ids
from personal_agent.engine.emitter import RunEmitter
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec
from tests.auth import auth_headers
from tests.integration.valkey_restart import restartable_valkey
from tests.sse import Frame, parse_frames

pytestmark = pytest.mark.timeout(90)
PING = "ping"


@pytest.fixture(autouse=True)
def _quick_heartbeats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(get_settings(), "sse_heartbeat_seconds", 0.2)


def _running_run(admin_url: str, tenant: Any) -> RunSpec:
    """A run in progress, stored as launch stores one; the test writes its events as its engine would."""
    run_id = uuid.uuid4()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        chat = conn.execute(
            "INSERT INTO chats (org_id, user_id, title) VALUES (%s, %s, 't') RETURNING id",
            [tenant.org_id, tenant.user_id],
        ).fetchone()
        assert chat is not None
        conn.execute(
            "INSERT INTO runs (id, org_id, chat_id, user_id, status, mode, spec)"
            " VALUES (%s, %s, %s, %s, 'running', 'inline', '{}')",
            [run_id, tenant.org_id, chat[0], tenant.user_id],
        )
    return RunSpec(
        run_id=run_id,
        org_id=tenant.org_id,
        user_id=tenant.user_id,
        chat_id=chat[0],
        model="m",
        instructions="",
        mode="inline",
    )


def _turn(spec: RunSpec, deltas: int) -> tuple[list[BaseEvent], list[BaseEvent]]:
    thread, run = str(spec.chat_id), str(spec.run_id)
    before: list[BaseEvent] = [
        RunStartedEvent(thread_id=thread, run_id=run),
        TextMessageStartEvent(message_id="m1", role="assistant"),
    ]
    during: list[BaseEvent] = [TextMessageContentEvent(message_id="m1", delta=f"d{i} ") for i in range(deltas)]
    during += [TextMessageEndEvent(message_id="m1"), RunFinishedEvent(thread_id=thread, run_id=run)]
    return before, during


async def _follow(http: httpx.AsyncClient, url: str, headers: dict[str, str], seen: list[Frame | str]) -> None:
    """Read one event-stream response to its end, noting each frame and each heartbeat in order."""
    async with http.stream("GET", url, headers=headers, timeout=60) as response:
        assert response.status_code == 200, await response.aread()
        pending: list[str] = []
        async for line in response.aiter_lines():
            if line.startswith(":"):
                seen.append(PING)
                continue
            pending.append(line)
            if line == "":
                frames, pending = parse_frames(pending)
                seen.extend(frames)


def _frames(seen: list[Frame | str]) -> list[Frame]:
    return [item for item in seen if isinstance(item, Frame)]


async def _until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def _emit_each(emitter: RunEmitter, events: list[BaseEvent]) -> None:
    for event in events:
        await emitter.emit(event)


def _described(frames: list[Frame]) -> list[tuple[str, Any]]:
    return [(f.type, f.data.get("delta")) for f in frames]


@pytest.mark.parametrize("fanout", [True, False], ids=["shared-tail", "own-xread"])
async def test_a_client_keeps_its_stream_across_a_valkey_restart_and_gets_every_event_once(
    stack: object,
    http: httpx.AsyncClient,
    admin_url: str,
    make_tenant: Any,
    monkeypatch: pytest.MonkeyPatch,
    fanout: bool,
) -> None:
    monkeypatch.setattr(get_settings(), "sse_fanout", fanout)
    tenant = make_tenant()
    spec = _running_run(admin_url, tenant)
    emitter = RunEmitter(spec)
    before, during = _turn(spec, deltas=30)
    seen: list[Frame | str] = []
    with restartable_valkey(stack) as valkey:
        client = asyncio.create_task(_follow(http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(tenant), seen))
        await _emit_each(emitter, before)
        await _until(lambda: len(_frames(seen)) == len(before))
        valkey.stop()  # with everything it acknowledged (a kill may lose the last writes: see the next tests)
        emitting = asyncio.create_task(_emit_each(emitter, during))  # waits the outage out
        cut_at = len(seen)
        await _until(lambda: seen[cut_at:].count(PING) >= 3)  # heartbeats keep the connection while Valkey is gone
        assert not client.done()
        valkey.start()
        await asyncio.wait_for(emitting, timeout=30)
        await asyncio.wait_for(client, timeout=30)  # the same response, ended by RUN_FINISHED
    frames = _frames(seen)
    assert _described(frames) == [(e.type.value, getattr(e, "delta", None)) for e in before + during]
    ids = [entry_ids.key(f.id or "") for f in frames]  # (ms, seq, index in a batch's entry)
    assert ids == sorted(set(ids)), "every event once, in stream order"


async def test_a_valkey_back_without_its_data_gives_the_client_resume_expired(
    stack: object, http: httpx.AsyncClient, admin_url: str, make_tenant: Any
) -> None:
    tenant = make_tenant()
    spec = _running_run(admin_url, tenant)
    emitter = RunEmitter(spec)
    before, during = _turn(spec, deltas=5)
    seen: list[Frame | str] = []
    with restartable_valkey(stack) as valkey:
        client = asyncio.create_task(_follow(http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(tenant), seen))
        await _emit_each(emitter, before)
        await _until(lambda: len(_frames(seen)) == len(before))
        last_seen = _frames(seen)[-1].id
        valkey.kill()
        valkey.start(empty=True)
        await _emit_each(emitter, during)  # the engine goes on writing; what the client missed is gone
        await asyncio.wait_for(client, timeout=30)
    frames = _frames(seen)
    assert _described(frames[: len(before)]) == [(e.type.value, None) for e in before]
    expired = frames[len(before) :]
    assert [(f.type, f.data.get("name"), f.data.get("value")) for f in expired] == [
        ("CUSTOM", "resume_expired", {"after": last_seen, "reason": "retention"})
    ], "the client is told to reload the transcript, and the stream ends"


async def test_a_valkey_back_from_an_older_copy_expires_clients_past_it_and_replays_the_rest_once(
    stack: object, http: httpx.AsyncClient, admin_url: str, make_tenant: Any, tmp_path: Path
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    spec = _running_run(admin_url, tenant)
    emitter = RunEmitter(spec)
    before, during = _turn(spec, deltas=8)
    lost, rest = during[:4], during[4:]
    url = f"/api/v1/runs/{spec.run_id}/events"
    seen: list[Frame | str] = []
    with restartable_valkey(stack) as valkey:
        client = asyncio.create_task(_follow(http, url, headers, seen))
        await _emit_each(emitter, before)
        await _until(lambda: len(_frames(seen)) == len(before))
        kept_until = _frames(seen)[-1].id
        valkey.stop()
        older = valkey.copy(tmp_path)  # a replica that has `before` and no more
        valkey.start()
        await _emit_each(emitter, lost)
        await emitter.flush()
        await _until(lambda: len(_frames(seen)) == len(before + lost))
        had_until = _frames(seen)[-1].id
        valkey.kill()
        valkey.start(data_from=older)  # the failover: acknowledged events are gone from the bus
        await asyncio.wait_for(client, timeout=30)
        await _emit_each(emitter, rest)  # the engine goes on; its writer sends the lost events again first
        resumed: list[Frame | str] = []
        await asyncio.wait_for(_follow(http, url, {**headers, "Last-Event-ID": str(kept_until)}, resumed), 30)
    expired = _frames(seen)[len(before + lost) :]
    assert [(f.type, f.data.get("name"), f.data.get("value")) for f in expired] == [
        ("CUSTOM", "resume_expired", {"after": had_until, "reason": "retention"})
    ], "the client that had the lost events is told to reload, not given them again"
    assert _described(_frames(resumed)) == [(e.type.value, getattr(e, "delta", None)) for e in lost + rest]


async def test_an_outage_past_the_bound_ends_the_stream_with_an_answer_and_new_readers_get_503(
    stack: object, http: httpx.AsyncClient, admin_url: str, make_tenant: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "dependency_retry_seconds", 1.0)
    tenant = make_tenant()
    spec = _running_run(admin_url, tenant)
    before, _ = _turn(spec, deltas=0)
    seen: list[Frame | str] = []
    url = f"/api/v1/runs/{spec.run_id}/events"
    with restartable_valkey(stack) as valkey:
        client = asyncio.create_task(_follow(http, url, auth_headers(tenant), seen))
        await _emit_each(RunEmitter(spec), before)
        await _until(lambda: len(_frames(seen)) == len(before))
        last_seen = _frames(seen)[-1].id
        valkey.kill()
        await asyncio.wait_for(client, timeout=15)  # the bound, then an answer: never a hang, never a silent stop
        refused = await asyncio.wait_for(http.get(url, headers=auth_headers(tenant)), timeout=15)
    ended = _frames(seen)[-1]
    assert (ended.type, ended.data.get("name"), ended.data.get("value")) == (
        "CUSTOM",
        "resume_expired",
        {"after": last_seen, "reason": "unavailable"},
    )
    assert refused.status_code == 503, refused.text
    assert refused.json()["code"] == "dependency_unavailable"
    assert int(refused.headers["Retry-After"]) >= 1
