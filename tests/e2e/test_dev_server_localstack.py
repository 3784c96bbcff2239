"""`pa dev --aws localstack` as a user starts it: LocalStack instead of moto, and a durable chat turn whose Tasks are
Step Functions Activities that the dev server polls. Driven over HTTP and the AWS API only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from tests.e2e.pa_dev import running_pa_dev
from tests.sfn import wait_for_execution


@pytest.fixture(scope="module")
def localstack_dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-localstack"), args=("--aws", "localstack")) as server:
        yield server.env | {"token": server.token}


def _stream(url: str, run_id: str, auth: dict[str, str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    with (
        httpx.Client(base_url=url, timeout=60) as http,
        http.stream("GET", f"/api/v1/runs/{run_id}/events", headers=auth) as stream,
    ):
        for line in stream.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
    return events


@pytest.mark.localstack
@pytest.mark.timeout(240)
def test_a_durable_chat_turn_runs_on_localstack_activities(localstack_dev: dict[str, str]) -> None:
    url = f"http://127.0.0.1:{localstack_dev['PA_PORT']}"
    auth = {"Authorization": f"Bearer {localstack_dev['token']}"}
    with httpx.Client(base_url=url, headers=auth, timeout=30) as http:
        chat = http.post("/api/v1/chats", json={"title": "durable on localstack"}).json()
        started = http.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": "hello", "mode": "durable"})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        events = _stream(url, run_id, auth)
        run = http.get(f"/api/v1/runs/{run_id}").json()
    assert (events[-1]["type"], run["status"], run["mode"]) == ("RUN_FINISHED", "succeeded", "durable")
    # The execution ran in LocalStack (moto's port is not even open), its Tasks as activity tasks.
    sfn = boto3.client(
        "stepfunctions",
        endpoint_url=f"http://127.0.0.1:{localstack_dev['PA_LOCALSTACK_PORT']}",
        region_name="us-east-1",
        aws_access_key_id="123456789012",  # LocalStack's account is the access key id: the dev server's is this
        aws_secret_access_key="localstack",
    )
    machine = next(m for m in sfn.list_state_machines()["stateMachines"] if m["name"] == "pa-agent_run")
    executions = sfn.list_executions(stateMachineArn=machine["stateMachineArn"])["executions"]
    execution = next(e for e in executions if e["name"] == run_id)
    assert ":123456789012:" in execution["executionArn"]
    assert wait_for_execution(sfn, execution["executionArn"])["status"] == "SUCCEEDED"
    history = {e["type"] for e in sfn.get_execution_history(executionArn=execution["executionArn"])["events"]}
    assert "ActivitySucceeded" in history and not {t for t in history if t.startswith("LambdaFunction")}
    # LocalStack kept its files under the dev server's data dir.
    assert (Path(localstack_dev["PA_DATA_DIR"]) / "localstack" / "localstack.log").exists()
