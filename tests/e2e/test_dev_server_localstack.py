"""`pa dev --aws localstack` as a user starts it: LocalStack instead of moto, and a durable chat turn whose Tasks are
Step Functions Activities that the dev server polls. Driven over HTTP and the AWS API only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from personal_agent.local.ports import free_port
from tests.sfn import wait_for_execution

ROOT = Path(__file__).resolve().parents[2]
PA = Path(sys.executable).parent / "pa"


@pytest.fixture(scope="module")
def localstack_dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PA_", "DATABASE_", "REDIS_", "AWS_ENDPOINT"))}
    env.pop("PYTHONPATH", None)
    env.update(
        PA_DATA_DIR=str(tmp_path_factory.mktemp("pa-dev-localstack")),
        PA_PORT=str(free_port()),
        PA_LOCALSTACK_PORT=str(free_port()),
        PA_MOTO_PORT=str(free_port()),
        PA_VALKEY_PORT=str(free_port()),
        PA_DEMO_DELAY_MS="0",
    )
    proc = subprocess.Popen(
        [str(PA), "dev", "--aws", "localstack"],
        cwd=ROOT / "docs",
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert proc.stdout is not None
    seen = []
    try:
        for line in proc.stdout:
            seen.append(line)
            if "running at" in line:
                break
        else:
            raise AssertionError(f"pa dev --aws localstack exited with {proc.wait()}: {''.join(seen)[-3000:]}")
        token = subprocess.run(
            [str(PA), "token", "--org", "e2e", "--user", "alice"],
            cwd=ROOT / "docs",
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        yield env | {"token": token.splitlines()[-1]}
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)


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
