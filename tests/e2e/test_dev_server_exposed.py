"""`pa dev` started as a user would, with PA_ENV unset but bound to every interface (PA_HOST=0.0.0.0):
no dev login, no dev tokens, no answer to a foreign `Host`, and an anonymous /readyz that names only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from personal_agent.local.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
PA = Path(sys.executable).parent / "pa"  # the console script `make dev` runs


@pytest.mark.timeout(300)
def test_an_exposed_dev_server_hands_out_no_tokens(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PA_", "DATABASE_", "REDIS_", "AWS_ENDPOINT"))}
    env.update(
        PA_HOST="0.0.0.0",
        PA_DATA_DIR=str(tmp_path / "data"),
        PA_PORT=str(free_port()),
        PA_MOTO_PORT=str(free_port()),
        PA_VALKEY_PORT=str(free_port()),
    )
    url = f"http://127.0.0.1:{env['PA_PORT']}"
    proc = subprocess.Popen(
        [str(PA), "dev"], cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    try:
        for line in proc.stdout:  # blocks on the next line; ends when the process exits
            if "running at" in line:
                break
        else:
            raise AssertionError(f"pa dev exited with {proc.wait()}")
        login_hint = proc.stdout.readline()
        assert "identity provider" in login_hint and "Sign in" not in login_hint, login_hint
        with httpx.Client(base_url=url, timeout=30) as http:
            ready = http.get("/readyz")
            assert ready.status_code == 200
            assert all(set(c) == {"name", "ok", "latency_ms"} for c in ready.json()["checks"])
            login = http.post("/api/v1/dev/login", json={"org": "acme", "user": "mallory", "role": "admin"})
            assert (login.status_code, login.json()["code"]) == (403, "dev_login_disabled")
            assert http.get("/api/v1/config").json()["dev_login"] is False
            rebound = http.get("/api/v1/config", headers={"Host": f"rebound.example:{env['PA_PORT']}"})
            assert (rebound.status_code, rebound.json()["code"]) == (400, "host_not_allowed")
        token = subprocess.run([str(PA), "token", "--org", "acme", "--user", "mallory"], env=env, capture_output=True)
        assert token.returncode == 2 and not token.stdout and b"PA_HOST" in token.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert proc.returncode == 0
