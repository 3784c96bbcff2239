"""`pa dev` (with the scripted model) in a child process, as a user runs it, plus what a benchmark reads about
it: bearer tokens, its CPU time and that of the Postgres and Valkey it started, and a py-spy profile."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
PY_SPY = Path(sys.executable).parent / "py-spy"
TOKENS = """
from personal_agent.identity.dev_issuer import DevIssuer
from personal_agent.settings import get_settings
issuer = DevIssuer.from_settings(get_settings())
for i in range({n}):
    print(issuer.mint(subject=f"bench{{i}}", orgs=["bench"], roles=["admin"], ttl_seconds=7200, email=None))
"""


class DevProcess:
    """`bench/scripted_dev.py` (= `pa dev` + the `bench:scripted` model) on free ports, data under `data_dir`;
    `env` adds settings (a variant's levers)."""

    def __init__(self, label: str, data_dir: Path, env: dict[str, str]) -> None:
        from personal_agent.local.ports import free_port

        self.label = label
        self.port = free_port()
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PA_", "DATABASE_", "REDIS_", "AWS_ENDP"))}
        base.pop("PYTHONPATH", None)
        self.env = {
            **base,
            "PA_DATA_DIR": str(data_dir),
            "PA_PORT": str(self.port),
            "PA_MOTO_PORT": str(free_port()),
            "PA_VALKEY_PORT": str(free_port()),
            "PA_DEMO_DELAY_MS": "0",
            "PA_SSE_MAX_CONNECTIONS_PER_USER": "50",
            **env,
        }
        self.log_path = data_dir.parent / f"{data_dir.name}.log"
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "scripted_dev.py")],
            cwd=ROOT / "docs",
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self._ready = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        with self.log_path.open("w") as log:
            for line in self.proc.stdout:
                log.write(line)
                log.flush()
                if "running at" in line:
                    self._ready.set()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.5):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"pa dev ({self.label}) did not start:\n{self.log_path.read_text()[-3000:]}")

    def tokens(self, n: int) -> list[str]:
        """n dev-issuer tokens of org `bench` (users bench0..), minted with the server's own key."""
        out = subprocess.run(
            [sys.executable, "-c", TOKENS.format(n=n)], env=self.env, capture_output=True, text=True, check=True
        )
        return out.stdout.split()[-n:]

    def cpu_seconds(self) -> tuple[float, float]:
        """(the server's processes, its Postgres and Valkey children) user+system CPU seconds so far. The server's
        processes are `pa dev` and the workers it forked (`PA_DEV_PROCESSES`: children with its command line)."""
        me = psutil.Process(self.proc.pid)
        own = sum(me.cpu_times()[:2])
        kids = 0.0
        for child in me.children(recursive=True):
            try:
                spent = sum(child.cpu_times()[:2])
                if child.cmdline() == me.cmdline():
                    own += spent
                else:
                    kids += spent
            except psutil.Error:
                pass
        return own, kids

    def profile(self, out: Path) -> subprocess.Popen[bytes]:
        """Start sampling the server with py-spy (raw collapsed stacks); send SIGINT to stop and write `out`."""
        return subprocess.Popen(
            [str(PY_SPY), "record", "--pid", str(self.proc.pid), "--subprocesses", "--format", "raw", "-o", str(out)]
            + ["--nonblocking"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
