"""An evaluation outlives the process that accepted it (issue 37): nothing of it is held in that process, its cases
are normal runs and their ends move it on. Start one on `pa dev`, kill the dev server (SIGKILL) while its first cases
are answering, start it again: the cases in flight resume, the rest are launched as those end, and it completes with
every case scored. Driven as a user does it: the `pa` console script and HTTP only."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import PA, ROOT, dev_env

CASES = [{"input": f"Question number {n}?", "expected": "offline demo model"} for n in (1, 2, 3)]


def _start(env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [str(PA), "dev"], cwd=ROOT / "docs", env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # blocks on the next line; ends when the process exits
        if "running at" in line:
            return proc
    raise AssertionError(f"pa dev exited with {proc.wait()}")


def _admin(env: dict[str, str]) -> dict[str, str]:
    args = [str(PA), "token", "--org", "e2e", "--user", "ada", "--role", "org-admin"]
    out = subprocess.run(args, cwd=ROOT / "docs", env=env, capture_output=True, text=True, check=True)
    return {"Authorization": f"Bearer {out.stdout.strip().splitlines()[-1]}"}


def _until(check: Any, what: str, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)  # polling the API for a state change, with a deadline
    raise AssertionError(f"not seen in {timeout}s: {what}")


def _eval_runs(http: httpx.Client, admin: dict[str, str], status: str) -> list[dict[str, Any]]:
    items = http.get("/api/v1/runs", params={"trigger_source": "eval"}, headers=admin).json()["items"]
    return [r for r in items if r["status"] == status]


@pytest.mark.timeout(420)
def test_an_evaluation_completes_after_the_dev_server_that_accepted_it_is_killed(tmp_path: Path) -> None:
    # The demo model waits this long before each word: the first dev server is killed while its cases answer.
    env = dev_env(tmp_path / "data", PA_DEMO_DELAY_MS="600000")
    env.pop("PYTHONPATH", None)
    url = f"http://127.0.0.1:{env['PA_PORT']}"
    first = _start(env)
    try:
        admin = _admin(env)
        with httpx.Client(base_url=url, timeout=60) as http:
            dataset = http.post(
                "/api/v1/evals/datasets",
                headers=admin,
                json={"name": "restart", "jsonl": "\n".join(map(json.dumps, CASES))},
            )
            assert dataset.status_code == 201, dataset.text
            body = {
                "dataset": dataset.json()["id"],
                "model": "offline:demo",
                "budget_usd": 1,
                "scorers": [{"kind": "contains"}],
            }
            accepted = http.post("/api/v1/evals/runs", headers=admin, json=body)
            assert accepted.status_code == 202, accepted.text
            eval_id = accepted.json()["id"]
            running = _until(lambda: len(_eval_runs(http, admin, "running")) == 2, "two cases answering")
            assert running and http.get(f"/api/v1/evals/runs/{eval_id}", headers=admin).json()["status"] == "running"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()

    second = _start({**env, "PA_DEMO_DELAY_MS": "0"})
    try:
        with httpx.Client(base_url=url, timeout=60) as http:

            def ended() -> dict[str, Any] | None:
                report = http.get(f"/api/v1/evals/runs/{eval_id}", headers=admin).json()
                return None if report["status"] in ("queued", "running") else dict(report)

            report = _until(ended, "the evaluation's end", timeout=240)
            succeeded = _eval_runs(http, admin, "succeeded")
    finally:
        second.send_signal(signal.SIGINT)
        second.communicate(timeout=60)

    print(json.dumps(report["summary"]))
    assert report["status"] == "succeeded", report
    assert report["summary"]["cases_done"] == 3 and report["summary"]["score"] == 1.0
    assert [c["status"] for c in report["cases"]] == ["succeeded"] * 3
    assert {c["run_id"] for c in report["cases"]} == {r["id"] for r in succeeded}  # one run a case, none twice
