"""A Postgres outage costs no run and no client a hang or a 500 (issue 41).

The outage is the embedded Postgres refusing the app: its connections are terminated (`admin_shutdown`, what a
restart or a failover does to them) and its role may not log in until the outage ends (new connections fail at
startup, as `cannot_connect_now` does). It starts at an exact point of a run (when the model's response is
complete, just before its ledger row and checkpoint are written) and ends on a condition the code logs (the first
retry, or the write giving up), never after a sleep. Unreachable servers that never answer are loopback sockets
that accept and stay silent: the bounded timeouts, not a refused connection, must answer the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import boto3
import httpx
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.bus import get_bus, reset_bus
from personal_agent.bus.key_names import run_stream
from personal_agent.db import close_pool
from personal_agent.errors import DependencyUnavailable
from personal_agent.lifecycle import bus_gate
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.lifecycle.local_drives import wait_for_local_runs
from personal_agent.lifecycle.recovery import recover_unattended
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.scripted import scripted_model, tool_rounds
from tests.sfn import wait_for_execution


class Outage:
    """Postgres refusing the app's role: its sessions terminated, its logins refused, until `end()`."""

    def __init__(self, admin_url: str, app_url: str) -> None:
        self.admin_url = admin_url
        self.role = conninfo_to_dict(app_url)["user"]
        self.began = 0
        self.ended = 0

    def begin(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'ALTER ROLE "{self.role}" NOLOGIN')
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [self.role])
        self.began += 1

    def end(self) -> None:
        if self.ended < self.began:
            with psycopg.connect(self.admin_url, autocommit=True) as conn:
                conn.execute(f'ALTER ROLE "{self.role}" LOGIN')
            self.ended += 1


class EndOutageOn(logging.Handler):
    """Ends the outage when the database layer logs `message` (a retry, or a unit giving up)."""

    def __init__(self, outage: Outage, message: str) -> None:
        super().__init__()
        self.outage = outage
        self.message = message
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg == self.message:
            self.seen.append(record.getMessage())
            self.outage.end()


@pytest.fixture
async def outage(admin_url: str, app_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Outage]:
    """Small bounds for the test (a pool request gives up after 0.5 s), a fresh pool that reads them, and the
    database always given back."""
    monkeypatch.setenv("PA_DATABASE_POOL_TIMEOUT_SECONDS", "0.5")
    get_settings.cache_clear()
    await close_pool()
    down = Outage(admin_url, app_url)
    try:
        yield down
    finally:
        down.end()
        monkeypatch.undo()
        get_settings.cache_clear()
        await close_pool()


@pytest.fixture
def db_log() -> Iterator[logging.Logger]:
    logger = logging.getLogger("personal_agent.db")
    level = logger.level
    logger.setLevel(logging.INFO)
    yield logger
    logger.setLevel(level)


def _script(outage: Outage) -> Any:
    """A tool call, then an answer; the outage begins once the first response is first complete (its stream
    drained), before anything of it is stored."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if tool_rounds(messages) == 0:
            yield "Checking the time."
            yield {0: DeltaToolCall(name="current_time", json_args="{}", tool_call_id="call_0")}
            if not outage.began:  # once: a resumed run asks for this response again
                outage.begin()
        else:
            yield "It is noon."

    return script


def _run(admin_url: str, run_id: uuid.UUID) -> dict[str, Any]:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute(
            "SELECT r.status, r.error, r.lease_owner, r.attempts,"
            " ARRAY(SELECT request_index FROM usage_records u WHERE u.run_id = r.id ORDER BY 1)"
            " FROM runs r WHERE r.id = %s",
            [run_id],
        ).fetchone()
    assert row is not None
    return dict(zip(("status", "error", "lease_owner", "attempts", "usage"), row, strict=True))


async def _events(org_id: uuid.UUID, run_id: uuid.UUID) -> list[dict[str, Any]]:
    entries = await get_bus().read(run_stream(org_id, run_id), "0", block_ms=0, count=10_000)
    events: list[dict[str, Any]] = []
    for entry in entries:
        data = json.loads(entry.data)
        events.extend(data if isinstance(data, list) else [data])
    return events


async def _launch(http: httpx.AsyncClient, tenant: Any, model: str) -> uuid.UUID:
    chat = await http.post("/api/v1/chats", json={}, headers=auth_headers(tenant))
    assert chat.status_code == 201, chat.text
    spec = await launch_run(
        LaunchRequest(
            org_id=tenant.org_id,
            user_id=tenant.user_id,
            chat_id=uuid.UUID(chat.json()["id"]),
            message="what time is it?",
            model=model,
            mode="inline",
            tools=("current_time",),
        )
    )
    return spec.run_id


async def test_a_ledger_and_checkpoint_write_during_a_short_outage_succeeds_after_it(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, outage: Outage, db_log: logging.Logger
) -> None:
    tenant = make_tenant()
    back = EndOutageOn(outage, "the database is unavailable; %s is tried again")
    db_log.addHandler(back)
    try:
        with scripted_model(_script(outage)) as (model, recorder):
            run_id = await _launch(http, tenant, model)
            await wait_for_local_runs()
    finally:
        db_log.removeHandler(back)
    assert outage.began == 1 and back.seen, "the outage met a write, which was tried again"
    run = _run(admin_url, run_id)
    assert (run["status"], run["error"], run["usage"]) == ("succeeded", None, [0, 1])
    assert len(recorder.calls) == 2  # the write was retried, not the run: no response was asked for twice
    types = [e["type"] for e in await _events(tenant.org_id, run_id)]
    assert types[-1] == "RUN_FINISHED" and "RUN_ERROR" not in types


async def test_an_outage_past_the_bound_pauses_the_run_and_recovery_finishes_it(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    outage: Outage,
    db_log: logging.Logger,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PA_DEPENDENCY_RETRY_SECONDS", "3")
    get_settings.cache_clear()
    tenant = make_tenant()
    # The outage outlasts the ledger write's bound, and is over by the time the paused drive releases its lease.
    over = EndOutageOn(outage, "the database stayed unavailable: %s not written")
    db_log.addHandler(over)
    try:
        with scripted_model(_script(outage)) as (model, recorder):
            run_id = await _launch(http, tenant, model)
            await wait_for_local_runs()
            assert over.seen and outage.ended == 1
            paused = _run(admin_url, run_id)
            # Paused, not failed: running at its last checkpoint, its lease released for any worker to take.
            assert (paused["status"], paused["error"], paused["lease_owner"]) == ("running", None, None)
            assert paused["usage"] == []  # the first response's row was never written: it is asked for again

            handed = await recover_unattended()
            await wait_for_local_runs()
    finally:
        db_log.removeHandler(over)
    assert run_id in handed
    run = _run(admin_url, run_id)
    assert (run["status"], run["error"], run["usage"], run["lease_owner"]) == ("succeeded", None, [0, 1], None)
    assert len(recorder.calls) == 3  # the response lost with the outage, then the resumed run's two
    events = await _events(tenant.org_id, run_id)
    types = [e["type"] for e in events]
    assert types.count("RUN_STARTED") == 1 and "RUN_ERROR" not in types and types[-1] == "RUN_FINISHED"
    assert [e["value"]["attempt"] for e in events if e.get("name") == "run_resumed"] == [2]


async def test_a_durable_run_waits_out_an_outage_past_the_bound_in_its_state_machine(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    outage: Outage,
    db_log: logging.Logger,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Task gives up after the bound with `DependencyUnavailable`; the real ASL (in moto) retries it with
    backoff, and the retried Task resumes the run from its last checkpoint to the end."""
    monkeypatch.setenv("PA_DEPENDENCY_RETRY_SECONDS", "1")
    get_settings.cache_clear()
    tenant = make_tenant()
    over = EndOutageOn(outage, "the database stayed unavailable: %s not written")
    db_log.addHandler(over)
    try:
        with scripted_model(_script(outage)) as (model, recorder):
            chat = await http.post("/api/v1/chats", json={}, headers=auth_headers(tenant))
            spec = await launch_run(
                LaunchRequest(
                    org_id=tenant.org_id,
                    user_id=tenant.user_id,
                    chat_id=uuid.UUID(chat.json()["id"]),
                    message="what time is it?",
                    model=model,
                    mode="durable",
                    tools=("current_time",),
                )
            )
            with psycopg.connect(admin_url) as conn:
                arn = conn.execute("SELECT execution_arn FROM runs WHERE id = %s", [spec.run_id]).fetchone()
            assert arn and arn[0]
            client = boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
            ended = await asyncio.to_thread(wait_for_execution, client, arn[0], 120.0)
    finally:
        db_log.removeHandler(over)
    assert over.seen and ended["status"] == "SUCCEEDED"
    failures = [
        e.get("lambdaFunctionFailedEventDetails", e.get("taskFailedEventDetails", {})).get("error")
        for e in client.get_execution_history(executionArn=arn[0], maxResults=1000)["events"]
    ]
    assert "DependencyUnavailable" in failures  # the Task failed for the outage, and its Retry took it on
    run = _run(admin_url, spec.run_id)
    assert (run["status"], run["error"], run["usage"]) == ("succeeded", None, [0, 1])
    assert len(recorder.calls) == 3  # the response lost with the outage, then the retried Task's two
    types = [e["type"] for e in await _events(tenant.org_id, spec.run_id)]
    assert "RUN_ERROR" not in types and types[-1] == "RUN_FINISHED"


def _silent_port() -> socket.socket:
    """A loopback port that accepts connections and never answers (a server that hangs, or a partition)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    return listener


def _unavailable(response: httpx.Response, dependency: str) -> None:
    assert response.status_code == 503, response.text
    body = response.json()
    assert (body["code"], body["details"]["dependency"]) == ("dependency_unavailable", dependency)
    assert int(response.headers["Retry-After"]) >= 1


async def test_the_api_answers_503_while_the_database_refuses_and_does_not_hang_on_a_silent_one(
    client: httpx.AsyncClient, make_tenant: Any, outage: Outage, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await client.post("/api/v1/chats", json={}, headers=headers)).json()
    run_id = uuid.uuid4()

    outage.begin()
    _unavailable(await client.get(f"/api/v1/runs/{run_id}", headers=headers), "database")
    started = await client.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi"}, headers=headers)
    _unavailable(started, "database")
    outage.end()

    silent = _silent_port()
    try:
        monkeypatch.setenv("DATABASE_URL", f"postgresql://pa@127.0.0.1:{silent.getsockname()[1]}/pa")
        get_settings.cache_clear()
        await close_pool()
        began = time.monotonic()
        _unavailable(await client.get(f"/api/v1/runs/{run_id}", headers=headers), "database")
        # The pool's timeout (0.5 s here) answers, not the kernel's nor the client's.
        assert time.monotonic() - began < 5
    finally:
        silent.close()


def _closed_port() -> int:
    """A loopback port nothing listens on (a killed Valkey): connections are refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.asynccontextmanager
async def _bus_at(port: int) -> AsyncIterator[None]:
    """This loop's bus pointed at `port`; the real one given back after."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
        get_settings.cache_clear()
        await reset_bus()
        bus_gate.forget()
        try:
            yield
        finally:
            patch.undo()
            get_settings.cache_clear()
            await reset_bus()
            bus_gate.forget()


async def test_a_new_run_is_refused_while_the_bus_is_down(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await client.post("/api/v1/chats", json={}, headers=headers)).json()
    async with _bus_at(_closed_port()):
        started = await client.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi"}, headers=headers)
    _unavailable(started, "bus")
    with psycopg.connect(admin_url) as conn:
        stored = conn.execute("SELECT count(*) FROM runs WHERE chat_id = %s", [chat["id"]]).fetchone()
    assert stored == (0,)  # refused, not accepted and failed later
    ok = await client.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi"}, headers=headers)
    assert ok.status_code == 202, ok.text  # the bus is back: so are new runs (the gate's answer is not kept)
    await wait_for_local_runs()


async def test_the_launch_gate_answers_within_its_timeout_when_the_bus_never_answers() -> None:
    silent = _silent_port()
    try:
        async with _bus_at(silent.getsockname()[1]):
            began = time.monotonic()
            with pytest.raises(DependencyUnavailable) as refused:
                await bus_gate.require_bus()
            assert time.monotonic() - began < bus_gate.PING_TIMEOUT_SECONDS + 2
            with pytest.raises(DependencyUnavailable):  # the answer is shared for a moment: no second PING waits
                await asyncio.wait_for(bus_gate.require_bus(), 0.2)
    finally:
        silent.close()
    assert refused.value.dependency == "bus"
