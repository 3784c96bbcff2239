"""A dead worker does not leave a run running forever.

A three-request inline run is driven by a worker in its own process, killed (SIGKILL) at each checkpoint
boundary; the recovery sweep hands the run to a new worker (this process), which resumes it from its last
checkpoint: it ends `succeeded` with exactly three usage rows and no stored response is requested again. A
run whose workers keep dying ends `failed` (`worker_lost`). On AWS a retried run worker invocation resumes
the run, and the on-failure destination ends it after the last retry. The worker stops at exact points
(`tests/crash_worker.py`): nothing here waits on time.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import psycopg
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.bus import get_bus
from personal_agent.bus.key_names import run_stream
from personal_agent.engine.runner import fail_run
from personal_agent.lifecycle.drivers import drive
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.lifecycle.lease import local_owner
from personal_agent.lifecycle.local_drives import stop_local_runs, wait_for_local_runs
from personal_agent.lifecycle.recovery import fail_lost_invocation, recover_unattended
from personal_agent.settings import get_settings
from tests import crash_worker, db_state
from tests.auth import auth_headers
from tests.crash_worker import WorkerProcess
from tests.lambda_context import load_event
from tests.scripted import scripted_model, tool_rounds
from tests.sse import Frame, read_events

# The last checkpoint stored when the worker is killed -> where it is stopped. Checkpoints: 0 start, 1 the
# first response (a tool call), 2 its tool result, 3 the second response, 4 its tool result, 5 the answer.
BOUNDARIES = {0: "request:0", 1: "tool:0", 2: "request:1", 3: "tool:1", 4: "request:2", 5: "request:2"}
STORED_RESPONSES = {0: 0, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3}


@pytest.fixture
def model_calls() -> Iterator[list[int]]:
    """The scripted model and tool in this process (the new worker); the request indexes it was asked."""
    calls: list[int] = []
    crash_worker.register(calls=calls)
    yield calls
    crash_worker.unregister()


async def _new_run(http: httpx.AsyncClient, tenant: Any, block: str) -> dict[str, str]:
    chat = await http.post("/api/v1/chats", json={}, headers=auth_headers(tenant))
    assert chat.status_code == 201, chat.text
    return {
        "org_id": str(tenant.org_id),
        "user_id": str(tenant.user_id),
        "chat_id": chat.json()["id"],
        "run_id": str(uuid.uuid4()),
        "block": block,
    }


def _run(admin_url: str, run_id: str) -> dict[str, Any]:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute(
            "SELECT r.status, r.error->>'code', r.lease_owner, r.attempts,"
            " (SELECT max(seq) FROM run_checkpoints c WHERE c.run_id = r.id),"
            " ARRAY(SELECT request_index FROM usage_records u WHERE u.run_id = r.id ORDER BY 1)"
            " FROM runs r WHERE r.id = %s",
            [run_id],
        ).fetchone()
    assert row is not None
    keys = ("status", "code", "lease_owner", "attempts", "checkpoint", "usage")
    return dict(zip(keys, row, strict=True))


async def _wait_for_step_finished(org_id: str, run_id: str, step: str) -> None:
    """Block on the run's event stream until `step` finished (its checkpoint is committed before that event)."""
    after = "0"
    while True:
        for entry in await get_bus().read(run_stream(org_id, run_id), after, block_ms=5000):
            after = entry.id
            event = json.loads(entry.data)
            if event.get("type") == "STEP_FINISHED" and event.get("stepName") == step:
                return


async def _kill_at(boundary: int, config: dict[str, str], admin_url: str, log: Path) -> None:
    """Start the run in a worker process and kill it once checkpoint `boundary` is its last."""
    worker = WorkerProcess("launch", config, log)
    with psycopg.connect(admin_url) as held:
        assert await asyncio.to_thread(worker.wait_blocked) == BOUNDARIES[boundary]
        if boundary == 5:
            # The answer is stored next; holding the chat row keeps the run's end (it updates the chat) from
            # committing, so the kill lands between the last checkpoint and the end.
            held.execute("SELECT 1 FROM chats WHERE id = %s FOR NO KEY UPDATE", [config["chat_id"]])
            worker.go_on()
            await _wait_for_step_finished(config["org_id"], config["run_id"], "model_request:2")
        assert _run(admin_url, config["run_id"])["checkpoint"] == boundary
        worker.kill()
        held.rollback()


def _resumed(frames: list[Frame]) -> list[int]:
    return [f.data["value"]["attempt"] for f in frames if f.type == "CUSTOM" and f.data["name"] == "run_resumed"]


@pytest.mark.parametrize("boundary", sorted(BOUNDARIES))
async def test_a_worker_killed_at_a_checkpoint_boundary_is_resumed_and_bills_each_request_once(
    boundary: int,
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    model_calls: list[int],
    tmp_path: Path,
) -> None:
    tenant = make_tenant()
    config = await _new_run(http, tenant, BOUNDARIES[boundary])
    await _kill_at(boundary, config, admin_url, tmp_path / "worker.log")
    assert _run(admin_url, config["run_id"])["status"] == "running"  # what the old code left forever

    handed = await recover_unattended()
    await wait_for_local_runs()

    assert uuid.UUID(config["run_id"]) in handed
    assert model_calls == list(range(STORED_RESPONSES[boundary], 3))  # a stored response is not asked again
    run = _run(admin_url, config["run_id"])
    assert (run["status"], run["usage"], run["lease_owner"], run["attempts"]) == ("succeeded", [0, 1, 2], None, 0)
    headers = auth_headers(tenant)
    frames = await read_events(http, f"/api/v1/runs/{config['run_id']}/events", headers)
    types = [f.type for f in frames]
    assert types.count("RUN_STARTED") == 1 and "RUN_ERROR" not in types
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert _resumed(frames) == [2]
    transcript = (await http.get(f"/api/v1/chats/{config['chat_id']}/messages", headers=headers)).json()["items"]
    assert transcript[-1]["role"] == "assistant" and transcript[-1]["text"] == "Step 2. All done."
    assert [i["role"] for i in transcript].count("tool") == 2


async def test_a_run_whose_workers_keep_dying_ends_failed_worker_lost(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, model_calls: list[int], tmp_path: Path
) -> None:
    tenant = make_tenant()
    config = await _new_run(http, tenant, "request:0")
    log = tmp_path / "worker.log"
    await _kill_at(0, config, admin_url, log)
    for attempt in (2, 3):  # each recovery hands the run to a worker that dies at the same point again
        worker = WorkerProcess("recover", config, log)
        assert await asyncio.to_thread(worker.wait_blocked) == "request:0"
        assert _run(admin_url, config["run_id"])["attempts"] == attempt
        worker.kill()

    handed = await recover_unattended()
    await wait_for_local_runs()

    assert uuid.UUID(config["run_id"]) in handed
    assert model_calls == []  # past the limit the run is ended, not driven again
    run = _run(admin_url, config["run_id"])
    assert (run["status"], run["code"], run["usage"]) == ("failed", "worker_lost", [])
    frames = await read_events(http, f"/api/v1/runs/{config['run_id']}/events", auth_headers(tenant))
    assert frames[-1].type == "RUN_ERROR" and frames[-1].data["code"] == "worker_lost"
    assert _resumed(frames) == [2, 3]


def _invoke(function: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Invoke a function as Lambda does (moto dispatches to the handler `template.yaml` names)."""
    client = boto3.client("lambda", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
    answer = client.invoke(FunctionName=function, Payload=json.dumps(payload).encode())
    assert "FunctionError" not in answer, answer["Payload"].read()
    result: dict[str, Any] = json.loads(answer["Payload"].read())
    return result


def _as_if_a_lambda_attempt_held_it(admin_url: str, run_id: str, request_id: str, *, expired: bool) -> None:
    """The lease as a run worker invocation that died leaves it: expired by the time Lambda retries (60 s
    later, more than the lease), still live when the on-failure destination runs right after the last try."""
    db_state.hold_lease(admin_url, run_id, f"lambda:{request_id}:0a1b2c3d", minutes=-1 if expired else 1)


async def test_a_retried_run_worker_invocation_resumes_the_run_from_its_checkpoint(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, model_calls: list[int], tmp_path: Path
) -> None:
    tenant = make_tenant()
    config = await _new_run(http, tenant, "tool:1")
    await _kill_at(3, config, admin_url, tmp_path / "worker.log")
    request_id = str(uuid.uuid4())
    _as_if_a_lambda_attempt_held_it(admin_url, config["run_id"], request_id, expired=True)

    event = {"run_id": config["run_id"], "org_id": config["org_id"]}
    result = await asyncio.to_thread(_invoke, "pa-run-worker", event)

    assert result == {"run_id": config["run_id"], "status": "succeeded"}
    assert model_calls == [2]
    assert _run(admin_url, config["run_id"])["usage"] == [0, 1, 2]


async def test_the_run_worker_on_failure_destination_ends_the_run_worker_lost(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, model_calls: list[int], tmp_path: Path
) -> None:
    tenant = make_tenant()
    config = await _new_run(http, tenant, "request:1")
    await _kill_at(2, config, admin_url, tmp_path / "worker.log")
    record = load_event("run_worker_on_failure.json")
    record["requestPayload"] = {"run_id": config["run_id"], "org_id": config["org_id"]}

    # Another invocation holds a live lease: that worker goes on, the record changes nothing.
    _as_if_a_lambda_attempt_held_it(admin_url, config["run_id"], str(uuid.uuid4()), expired=False)
    assert await asyncio.to_thread(_invoke, "pa-run-recovery", record) == {"run_id": config["run_id"], "failed": False}
    assert _run(admin_url, config["run_id"])["status"] == "running"

    # The failed invocation's own lease (its last attempt died a moment ago): the run ends.
    _as_if_a_lambda_attempt_held_it(admin_url, config["run_id"], record["requestContext"]["requestId"], expired=False)
    assert await asyncio.to_thread(_invoke, "pa-run-recovery", record) == {"run_id": config["run_id"], "failed": True}

    run = _run(admin_url, config["run_id"])
    assert (run["status"], run["code"], run["usage"]) == ("failed", "worker_lost", [0])
    assert model_calls == []
    frames = await read_events(http, f"/api/v1/runs/{config['run_id']}/events", auth_headers(tenant))
    assert frames[-1].type == "RUN_ERROR" and frames[-1].data["code"] == "worker_lost"


async def test_an_invocation_whose_attempts_met_an_outage_hands_the_run_back_instead_of_failing_it(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, model_calls: list[int], tmp_path: Path
) -> None:
    """The run worker's every attempt raised DependencyUnavailable (the database stayed down past the bound): the
    on-failure record names that class, and the run, paused at its checkpoint, goes back to its driver."""
    tenant = make_tenant()
    config = await _new_run(http, tenant, "request:1")
    await _kill_at(2, config, admin_url, tmp_path / "worker.log")
    record = load_event("run_worker_on_failure.json")
    record["requestPayload"] = {"run_id": config["run_id"], "org_id": config["org_id"]}
    record["responsePayload"] = {"errorType": "DependencyUnavailable", "errorMessage": "the database stayed down"}
    _as_if_a_lambda_attempt_held_it(admin_url, config["run_id"], record["requestContext"]["requestId"], expired=False)

    assert await fail_lost_invocation(record) is False
    await wait_for_local_runs()

    run = _run(admin_url, config["run_id"])
    assert (run["status"], run["code"], run["usage"]) == ("succeeded", None, [0, 1, 2])
    assert model_calls == [1, 2]  # resumed from its checkpoint: the stored first response is not asked again


async def test_two_workers_never_drive_one_run_and_one_that_lost_its_lease_stops(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    chat = (await http.post("/api/v1/chats", json={}, headers=auth_headers(tenant))).json()
    asking, never = asyncio.Event(), asyncio.Event()

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if tool_rounds(messages) == 0:
            yield {0: DeltaToolCall(name="current_time", json_args="{}", tool_call_id="call_0")}
        else:
            asking.set()
            await never.wait()  # this worker is still asking for the answer when the run is taken from it
            yield "never sent"

    settings = get_settings()
    lease_seconds, settings.run_lease_seconds = (
        settings.run_lease_seconds,
        3.0,
    )  # a heartbeat every 1 s: ample on a loaded machine
    try:
        with scripted_model(script) as (model, recorder):
            request = LaunchRequest(
                tenant.org_id, tenant.user_id, uuid.UUID(chat["id"]), "what time is it?", model=model, mode="inline"
            )
            spec = await launch_run(request)
            await asking.wait()
            assert await drive(spec.run_id, spec.org_id, local_owner()) == "leased"  # a second worker refuses
            db_state.take_lease_elsewhere(admin_url, spec.run_id, "elsewhere:1:0")  # another worker took it over
            await wait_for_local_runs()  # the first worker's heartbeat finds the lease gone and stops driving
    finally:
        settings.run_lease_seconds = lease_seconds
    run = _run(admin_url, str(spec.run_id))
    assert (run["status"], run["lease_owner"], run["usage"]) == ("running", "elsewhere:1:0", [0])
    assert len(recorder.calls) == 2
    await fail_run(spec.run_id, spec.org_id, "test_done", "ended by the test")  # nothing drives it any more


async def test_runs_stopped_with_the_dev_server_resume_at_its_next_start(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    chat = (await http.post("/api/v1/chats", json={}, headers=auth_headers(tenant))).json()
    asking, stopped = asyncio.Event(), False

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if not stopped:
            asking.set()
            await asyncio.Event().wait()  # Ctrl-C comes while the model is being asked
        yield "Back again."

    with scripted_model(script) as (model, recorder):
        request = LaunchRequest(tenant.org_id, tenant.user_id, uuid.UUID(chat["id"]), "hi", model=model, mode="inline")
        spec = await launch_run(request)
        await asking.wait()
        await stop_local_runs()  # what the dev server does on shutdown
        run = _run(admin_url, str(spec.run_id))
        assert (run["status"], run["lease_owner"], run["attempts"]) == ("running", None, 0)
        stopped = True
        assert spec.run_id in await recover_unattended()  # the next start's sweep
        await wait_for_local_runs()
    assert _run(admin_url, str(spec.run_id))["status"] == "succeeded"
    assert len(recorder.calls) == 2
