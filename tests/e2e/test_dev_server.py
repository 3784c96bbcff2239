"""`pa dev` as a user runs it: it starts, answers /readyz, reuses its data, and Ctrl-C stops every part."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from personal_agent.local.ports import free_port
from tests.e2e.pa_dev import dev_env

ROOT = Path(__file__).resolve().parents[2]
PA = [sys.executable, "-m", "personal_agent.cli"]


def _wait_ready(proc: subprocess.Popen[str], url: str) -> list[str]:
    """Read the dev server's output until it says it is serving (printed once uvicorn listens)."""
    assert proc.stdout is not None
    seen: list[str] = []
    for line in proc.stdout:  # blocks on the next line; ends if the process exits
        seen.append(line)
        if "running at" in line:
            assert httpx.get(f"{url}/readyz", timeout=10).status_code == 200
            return seen
    raise AssertionError(f"pa dev exited with {proc.wait()}: {proc.stderr.read() if proc.stderr else ''}")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _start_and_stop(env: dict[str, str]) -> None:
    proc = subprocess.Popen(PA + ["dev"], cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen: list[str] = []
    try:
        seen = _wait_ready(proc, f"http://127.0.0.1:{env['PA_PORT']}")
    finally:
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
    out = "".join(seen) + rest
    assert proc.returncode == 0
    assert "running at" in out and "stopped" in out
    for port in ("PA_PORT", "PA_MOTO_PORT", "PA_VALKEY_PORT"):
        assert not _port_open(int(env[port])), f"{port} still open after Ctrl-C"
    assert not (Path(env["PA_DATA_DIR"]) / "pgdata" / "postmaster.pid").exists(), "Postgres still running"


@pytest.mark.timeout(300)
def test_dev_server_starts_answers_readyz_and_stops_everything(tmp_path: Path) -> None:
    env = dev_env(tmp_path / "data")
    _start_and_stop(env)
    # A second start reuses the data (no initdb again) and comes up the same way.
    marker = tmp_path / "data" / "pgdata" / "PG_VERSION"
    before = marker.stat().st_mtime
    _start_and_stop(dev_env(tmp_path / "data"))
    assert marker.stat().st_mtime == before


def test_taken_port_is_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        env = dev_env(tmp_path / "data", PA_PORT=str(held.getsockname()[1]))
        proc = subprocess.run(PA + ["dev"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "already in use" in lines[0] and "PA_PORT" in lines[0]


def test_unreachable_configured_service_is_one_clear_line(tmp_path: Path) -> None:
    env = dev_env(tmp_path / "data", DATABASE_URL=f"postgresql://u@127.0.0.1:{free_port()}/db")
    proc = subprocess.run(PA + ["dev"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "unreachable" in lines[0] and "DATABASE_URL" in lines[0]
