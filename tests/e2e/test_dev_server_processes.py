"""`pa dev` serves its port from two processes (`local.dev_processes`): both take connections and drive runs, a
Ctrl-C to the parent alone stops the worker too (and does not wait for open event streams), and a killed parent takes
its worker with it."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import psutil
import pytest

from tests.e2e.pa_dev import dev_env

ROOT = Path(__file__).resolve().parents[2]
PA = [sys.executable, "-m", "personal_agent.cli"]
pytestmark = pytest.mark.timeout(300)


def _start(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        PA + ["dev"], cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    seen: list[str] = []
    for line in proc.stdout:
        seen.append(line)
        if "running at" in line:
            return proc, line
    raise AssertionError(f"pa dev exited with {proc.wait()}: {''.join(seen)[-3000:]}")


def _workers(pid: int) -> list[psutil.Process]:
    """The parent's forked workers (its other children are Postgres and Valkey)."""
    parent = psutil.Process(pid)
    return [child for child in parent.children() if child.cmdline() == parent.cmdline()]


def _serving_pids(port: int, pids: list[int]) -> set[int]:
    """Which of `pids` hold an established connection on `port` (accepted by them)."""
    return {
        pid
        for pid in pids
        for c in psutil.Process(pid).net_connections(kind="tcp")
        if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == port
    }


def _token(env: dict[str, str]) -> dict[str, str]:
    out = subprocess.run(
        PA + ["token", "--org", "procs", "--user", "alice"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return {"Authorization": f"Bearer {out.stdout.strip().splitlines()[-1]}"}


def test_two_processes_take_connections_drive_runs_and_stop_together(tmp_path: Path) -> None:
    env = dev_env(tmp_path / "data", PA_DEMO_DELAY_MS="0", PA_DEV_PROCESSES="2")
    port = int(env["PA_PORT"])
    proc, ready = _start(env)
    clients: list[httpx.Client] = []
    try:
        assert "2 processes" in ready
        (worker,) = _workers(proc.pid)
        pids = [proc.pid, worker.pid]
        headers = _token(env)
        # Keep-alive connections, opened until both processes hold one (the kernel picks the acceptor).
        while len(clients) < 40 and _serving_pids(port, pids) != set(pids):
            client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60)
            clients.append(client)
            assert client.get("/api/v1/me").status_code == 200
        assert _serving_pids(port, pids) == set(pids)
        # Every connection, whichever process holds it, starts and streams a run to its end.
        for client in clients:
            chat = client.post("/api/v1/chats", json={"title": "two processes"}).json()
            with client.stream("POST", f"/api/v1/chats/{chat['id']}/runs/stream", json={"message": "hi"}) as r:
                assert r.status_code == 200
                frames = [line for line in r.iter_lines() if line.startswith("data:")]
            assert '"RUN_FINISHED"' in frames[-1]
    finally:
        for client in clients:
            client.close()
        proc.send_signal(signal.SIGINT)  # the parent alone, as a test harness or a supervisor would
        rest, _ = proc.communicate(timeout=90)
    assert proc.returncode == 0 and "pa dev: stopped" in rest
    assert not psutil.pid_exists(worker.pid) or worker.status() == psutil.STATUS_ZOMBIE


def test_ctrl_c_stops_while_an_event_stream_is_open(tmp_path: Path) -> None:
    """A browser tab's feed never ends on its own: the stop ends it instead of waiting for it (it used to hang)."""
    env = dev_env(tmp_path / "data", PA_DEMO_DELAY_MS="0")
    proc, _ = _start(env)
    opened, ended = threading.Event(), threading.Event()

    def follow() -> None:
        url = f"http://127.0.0.1:{env['PA_PORT']}/api/v1/feed"
        try:
            with httpx.stream("GET", url, headers=_token(env), timeout=None) as response:
                assert response.status_code == 200
                opened.set()
                for _ in response.iter_raw():
                    pass
        except httpx.HTTPError:
            pass
        finally:
            ended.set()

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    try:
        assert opened.wait(60), "the feed did not open"
    finally:
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=90)  # raises TimeoutExpired when the open stream holds the stop
    assert proc.returncode == 0 and "pa dev: stopped" in rest
    assert ended.wait(30), "the feed was not closed by the stop"


def test_a_killed_parent_takes_its_worker_with_it(tmp_path: Path) -> None:
    env = dev_env(tmp_path / "data", PA_DEMO_DELAY_MS="0", PA_DEV_PROCESSES="2")
    proc, _ = _start(env)
    try:
        (worker,) = _workers(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        worker.wait(timeout=30)  # raises TimeoutExpired if the worker outlives its parent
        assert not worker.is_running()
        with pytest.raises(httpx.ConnectError):  # nothing serves the port any more
            httpx.get(f"http://127.0.0.1:{env['PA_PORT']}/readyz", timeout=5)
        # A new `pa dev` takes the same port and data.
        again, _ = _start(env)
        again.send_signal(signal.SIGINT)
        rest, _ = again.communicate(timeout=90)
        assert again.returncode == 0 and "pa dev: stopped" in rest
    finally:
        _stop_orphans(env)


def _stop_orphans(env: dict[str, str]) -> None:
    """What the killed parent left running (its Postgres and Valkey outlive a SIGKILL)."""
    marks = (env["PA_DATA_DIR"], f"127.0.0.1:{env['PA_VALKEY_PORT']}")
    for process in psutil.process_iter(["cmdline"]):
        if any(mark in " ".join(process.info["cmdline"] or ()) for mark in marks):
            process.terminate()
