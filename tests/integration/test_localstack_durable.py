"""What moto could not show, on LocalStack: the same durable run gives the same events and checkpoints on both
emulators (moto's lambda:invoke Tasks, LocalStack's activity Tasks), and a step's error follows the ASL's Retry and
Catch as written. Cancel during an approval wait (the token fails, Catch to Done) and the approval timeout path
are the parametrized `test_durable_runs.py` tests on LocalStack."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from personal_agent.lifecycle.durable_steps import RetryableStepError
from personal_agent.local.lambda_registry import LambdaRegistry
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.emulators import Emulator
from tests.scripted import scripted_model, text_then_tool
from tests.sfn import wait_for_execution
from tests.sse import Frame, read_events


def normalized(frames: list[Frame]) -> list[tuple[Any, ...]]:
    keep = ("delta", "toolCallName", "content", "stepName", "outcome", "name", "role")
    return [(f.type, *(f.data.get(k) for k in keep)) for f in frames]


def checkpoints(admin_url: str, run_id: str) -> list[tuple[Any, ...]]:
    """The run's checkpoints and usage rows, without ids and timestamps."""
    with psycopg.connect(admin_url) as conn:
        cps = conn.execute(
            "SELECT seq, kind, jsonb_array_length(messages) FROM run_checkpoints WHERE run_id = %s ORDER BY seq",
            [run_id],
        ).fetchall()
        usage = conn.execute(
            "SELECT request_index, input_tokens, output_tokens FROM usage_records WHERE run_id = %s ORDER BY 1",
            [run_id],
        ).fetchall()
    return [*cps, *usage]


def _history(sfn: Any, arn: str) -> list[dict[str, Any]]:
    return list(sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"])


async def _durable_run(http: httpx.AsyncClient, headers: dict[str, str], model: str) -> tuple[str, list[Frame]]:
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    started = await http.post(
        f"/api/v1/chats/{chat['id']}/runs",
        json={"message": "what time is it?", "model": model, "mode": "durable"},
        headers=headers,
    )
    assert started.status_code == 202, started.text
    return started.json()["run_id"], await read_events(http, started.json()["events_url"], headers)


async def test_the_same_run_gives_the_same_events_and_checkpoints_on_both_emulators(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    localstack_aws: Emulator,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    headers = auth_headers(make_tenant())
    script = text_then_tool(rounds=2, tool="calculate", args='{"expression": "6*7"}')
    runs = {}
    with scripted_model(script) as (model, _):
        runs["moto"] = await _durable_run(http, headers, model)
        settings = get_settings()
        monkeypatch.setattr(settings, "aws_endpoint_url", localstack_aws.endpoint_url)
        monkeypatch.setattr(settings, "state_machine_arn", localstack_aws.state_machines["agent_run"])
        runs["localstack"] = await _durable_run(http, headers, model)
    (moto_run, moto_frames), (ls_run, ls_frames) = runs["moto"], runs["localstack"]
    assert ls_frames[-1].type == "RUN_FINISHED" and ls_frames[-1].data["outcome"] == {"type": "success"}
    assert normalized(ls_frames) == normalized(moto_frames)
    assert checkpoints(admin_url, ls_run) == checkpoints(admin_url, moto_run)
    assert len(checkpoints(admin_url, ls_run)) >= 3
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute("SELECT id::text, execution_arn FROM runs WHERE id IN (%s, %s)", [moto_run, ls_run])
        arns = dict(rows.fetchall())
    # Each ran on the emulator meant: moto's account and LocalStack's differ.
    assert ":123456789012:" in arns[moto_run] and ":000000000000:" in arns[ls_run]
    assert wait_for_execution(localstack_aws.sfn(), arns[ls_run])["status"] == "SUCCEEDED"


@pytest.fixture
def failing_advance(stack: Any) -> Iterator[dict[str, Any]]:
    """The steps function with its `advance` failing as told (`errors`: exceptions raised one per call, in order);
    every other step, and `advance` once the errors are spent, runs the real handler."""
    registry: LambdaRegistry = stack.registry
    real = registry.resolve("pa-steps")[1]
    plan: dict[str, Any] = {"errors": [], "calls": 0}

    def steps(event: dict[str, Any], context: Any) -> Any:
        if event.get("action") == "advance":
            plan["calls"] += 1
            if plan["errors"]:
                raise plan["errors"].pop(0)
        return real(event, context)

    registry.overrides["pa-steps"] = steps
    yield plan
    registry.overrides.pop("pa-steps", None)


async def test_a_step_error_that_is_not_retried_is_caught_and_fails_the_run(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, failing_advance: dict[str, Any], durable_aws: Emulator
) -> None:
    failing_advance["errors"] = [ValueError("not a transient error")]
    headers = auth_headers(make_tenant())
    with scripted_model(text_then_tool(rounds=0)) as (model, recorder):
        run_id, frames = await _durable_run(http, headers, model)
    assert frames[-1].type == "RUN_ERROR"
    assert failing_advance["calls"] == 1 and recorder.calls == []  # ValueError is not in the Retry list
    run = (await http.get(f"/api/v1/runs/{run_id}", headers=headers)).json()
    assert run["status"] == "failed"
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT error->>'code', execution_arn FROM runs WHERE id = %s", [run_id]).fetchone()
    assert row and row[0] == "step_failed"
    sfn = durable_aws.sfn()
    final = wait_for_execution(sfn, row[1])
    assert (final["status"], final.get("error")) == ("FAILED", "RunFailed")
    entered = [e["stateEnteredEventDetails"]["name"] for e in _history(sfn, row[1]) if "stateEnteredEventDetails" in e]
    assert entered == ["Advance", "RecordFailure", "RunFailed"]


async def test_a_transient_step_error_is_retried_as_the_asl_says(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, failing_advance: dict[str, Any], durable_aws: Emulator
) -> None:
    failing_advance["errors"] = [RetryableStepError("db blinked"), RetryableStepError("db blinked again")]
    headers = auth_headers(make_tenant())
    with scripted_model(text_then_tool(rounds=0)) as (model, recorder):
        run_id, frames = await _durable_run(http, headers, model)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert failing_advance["calls"] == 3 and len(recorder.calls) == 1
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT execution_arn FROM runs WHERE id = %s", [run_id]).fetchone()
    assert row
    sfn = durable_aws.sfn()
    assert wait_for_execution(sfn, row[0])["status"] == "SUCCEEDED"
    events = _history(sfn, row[0])
    failed = [e for e in events if e["type"] in ("LambdaFunctionFailed", "TaskFailed", "ActivityFailed")]
    assert len(failed) == 2
    assert {e["type"] for e in events} & {"LambdaFunctionScheduled", "TaskScheduled", "ActivityScheduled"}
    # Retry waits IntervalSeconds * BackoffRate^n: 1 s, then 2 s, between the three attempts.
    started = [
        e["timestamp"] for e in events if e["type"] in ("LambdaFunctionStarted", "TaskStarted", "ActivityStarted")
    ]
    assert len(started) == 3
    assert (started[1] - started[0]).total_seconds() >= 0.9 and (started[2] - started[1]).total_seconds() >= 1.9
    assert os.environ["AWS_ENDPOINT_URL"] == durable_aws.endpoint_url
