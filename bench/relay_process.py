"""The SSE relay served by uvicorn in a child process, with what a benchmark reads about it: RSS, CPU time,
and the responses its log says failed."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
FAILED = "Exception in ASGI application"  # uvicorn's log line for a response that raised
EXCEPTION_LINE = re.compile(r"^[\w.]+(Error|Exception)\b")


class RelayProcess:
    """An ASGI app (`functions.stream.app:app` unless told) under uvicorn in a child process. It inherits this
    process's env, so it shares the started stack's Postgres, Valkey and dev issuer key."""

    def __init__(self, app: str, log_path: Path, redis_options: str | None = None) -> None:
        from personal_agent.local.ports import free_port

        self.port = free_port()
        self.log_path = log_path
        self._log = log_path.open("wb")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        if redis_options:  # redis-py reads client and pool options from the URL's query string
            env["REDIS_URL"] = f"{env['REDIS_URL']}?{redis_options.lstrip('?')}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", app, "--host", HOST, "--port", str(self.port)]
            + ["--log-level", "warning", "--timeout-graceful-shutdown", "5"],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 60.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(f"http://{HOST}:{self.port}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"the relay process did not start; its log:\n{self.log_path.read_text()[-2000:]}")

    def rss_mib(self) -> float | None:
        """VmRSS from /proc (None where there is no /proc)."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return None

    def cpu_seconds(self) -> float | None:
        """User + system CPU time so far, from /proc/<pid>/stat (None where there is no /proc)."""
        try:
            stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        except OSError:
            return None
        fields = stat[stat.rfind(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def failed_responses(self) -> Counter[str]:
        """Responses that raised so far, by their final exception line."""
        if not self._log.closed:
            self._log.flush()
        failures: Counter[str] = Counter()
        for block in self.log_path.read_text(errors="replace").split(FAILED)[1:]:
            own = block.split("\nunhandled error")[0]  # the app's own error log repeats the traceback
            lines = [line.strip() for line in own.splitlines() if EXCEPTION_LINE.match(line)]
            failures[lines[-1] if lines else "?"] += 1
        return failures

    def stop(self) -> None:
        """SIGTERM (uvicorn drains for up to 5 s), then SIGKILL if it is still there."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
