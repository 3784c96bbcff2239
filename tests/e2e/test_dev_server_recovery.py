"""A killed `pa dev` does not leave its runs running: SIGKILL it in the middle of an inline run, start it again,
and the run resumes from its last checkpoint and finishes (the model request whose answer was stored is not
asked, nor billed, again). Driven as a user does it: the `pa` console script and HTTP only."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from personal_agent.local.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
PA = Path(sys.executable).parent / "pa"  # the console script `make dev` runs


def _start(env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [str(PA), "dev"], cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # blocks on the next line; ends when the process exits
        if "running at" in line:
            return proc
    raise AssertionError(f"pa dev exited with {proc.wait()}")


def _token(env: dict[str, str]) -> dict[str, str]:
    out = subprocess.run(
        [str(PA), "token", "--org", "e2e", "--user", "alice"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return {"Authorization": f"Bearer {out.stdout.strip().splitlines()[-1]}"}


def _events(http: httpx.Client, run_id: str, headers: dict[str, str]) -> Iterator[dict[str, object]]:
    with http.stream("GET", f"/api/v1/runs/{run_id}/events", headers=headers) as stream:
        assert stream.status_code == 200
        for line in stream.iter_lines():
            if line.startswith("data:"):
                yield json.loads(line[5:])


@pytest.mark.timeout(300)
def test_an_inline_run_survives_a_killed_dev_server(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PA_", "DATABASE_", "REDIS_", "AWS_ENDPOINT"))}
    env.pop("PYTHONPATH", None)
    env.update(
        PA_DATA_DIR=str(tmp_path / "data"),
        PA_PORT=str(free_port()),
        PA_MOTO_PORT=str(free_port()),
        PA_VALKEY_PORT=str(free_port()),
        # The demo model's answer waits this long before each word: the first dev server is killed inside it.
        PA_DEMO_DELAY_MS="600000",
    )
    url = f"http://127.0.0.1:{env['PA_PORT']}"
    first = _start(env)
    try:
        headers = _token(env)
        with httpx.Client(base_url=url, timeout=60) as http:
            chat = http.post("/api/v1/chats", json={"title": "killed"}, headers=headers).json()
            started = http.post(
                f"/api/v1/chats/{chat['id']}/runs",
                json={"message": "what time is it?", "mode": "inline"},
                headers=headers,
            )
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            for event in _events(http, run_id, headers):  # the time was looked up; the answer is being asked for
                if event["type"] == "STEP_STARTED" and event["stepName"] == "model_request:1":
                    break
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()

    second = _start({**env, "PA_DEMO_DELAY_MS": "0"})
    try:
        headers = _token(env)
        with httpx.Client(base_url=url, timeout=60) as http:
            events = list(_events(http, run_id, headers))  # the relay closes the stream after the run's end
            run = http.get(f"/api/v1/runs/{run_id}", headers=headers).json()
            ledger = http.get("/api/v1/usage/export", headers=headers).text
            transcript = http.get(f"/api/v1/chats/{chat['id']}/messages", headers=headers).json()["items"]
    finally:
        second.send_signal(signal.SIGINT)
        second.communicate(timeout=60)

    assert (run["status"], events[-1]["type"]) == ("succeeded", "RUN_FINISHED")
    assert [e["name"] for e in events if e["type"] == "CUSTOM" and e["name"] == "run_resumed"] == ["run_resumed"]
    rows = [r for r in csv.DictReader(io.StringIO(ledger)) if r["run_id"] == run_id]
    assert sorted(int(r["request_index"]) for r in rows) == [0, 1]  # the stored first response was not billed twice
    assert transcript[-1]["role"] == "assistant" and "offline demo model" in transcript[-1]["text"]
