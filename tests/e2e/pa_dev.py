"""`pa dev` started as a user starts it, for the end-to-end tests: the `pa` console script (so the repo root is not
on `sys.path`), from a folder inside the repo (nothing may depend on the working directory), on free ports and a
data directory of its own, with a token minted by `pa token`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from personal_agent.local.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
PA = Path(sys.executable).parent / "pa"  # the console script `make dev` runs


def dev_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """This process's env without any setting of ours, plus a data directory and free ports of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PA_", "DATABASE_", "REDIS_", "AWS_ENDPOINT"))}
    env.update(
        PA_DATA_DIR=str(data_dir),
        PA_PORT=str(free_port()),
        PA_MOTO_PORT=str(free_port()),
        PA_VALKEY_PORT=str(free_port()),
    )
    env.update(extra)
    return env


@dataclass(frozen=True)
class DevServer:
    url: str
    aws_url: str
    env: dict[str, str]
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def auth_for(self, user: str, *roles: str, org: str = "e2e") -> dict[str, str]:
        """`Authorization` for another user of `org` with `roles`, minted by `pa token` as a user would."""
        args = [str(PA), "token", "--org", org, "--user", user, *(a for r in roles for a in ("--role", r))]
        minted = subprocess.run(args, cwd=ROOT / "docs", env=self.env, capture_output=True, text=True, check=True)
        return {"Authorization": f"Bearer {minted.stdout.strip().splitlines()[-1]}"}


def _drain(stream: IO[str], into: list[str] | deque[str]) -> None:
    for line in stream:
        into.append(line)


@contextmanager
def running_pa_dev(
    data_dir: Path,
    *,
    org: str = "e2e",
    args: tuple[str, ...] = (),
    env_extra: dict[str, str] | None = None,
    console: list[str] | None = None,
    startup: list[str] | None = None,
) -> Iterator[DevServer]:
    """`pa dev [args]` until the block ends (then stopped with Ctrl-C, as a user would). The operator allow-lists
    loopback for org providers (the tests' fake model servers); `env_extra` adds or overrides settings. With
    `console`, what `pa dev` prints once it is ready is appended to it, line by line, as it prints it; with
    `startup`, what it printed until then (its last line the one saying where it runs)."""
    defaults = {"PA_LOCALSTACK_PORT": str(free_port()), "PA_DEMO_DELAY_MS": "0", "PA_PROVIDER_ALLOW_HOSTS": "127.0.0.1"}
    env = dev_env(data_dir, **(defaults | (env_extra or {})))
    env.pop("PYTHONPATH", None)
    proc = subprocess.Popen(
        [str(PA), "dev", *args], cwd=ROOT / "docs", env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    seen: list[str] = []
    reader: threading.Thread | None = None
    try:
        for line in proc.stdout:  # blocks on the next line; ends when the process exits
            seen.append(line)
            if "running at" in line:
                break
        else:
            raise AssertionError(f"pa dev {' '.join(args)} exited with {proc.wait()}: {''.join(seen)[-3000:]}")
        if startup is not None:
            startup.extend(seen)
        # Read what it prints from now on even when no one asked for it: a pipe nobody reads fills (64 KiB) and
        # then blocks the server's next log line, and with it the request that logs it.
        sink: list[str] | deque[str] = console if console is not None else deque(maxlen=1000)
        reader = threading.Thread(target=_drain, args=(proc.stdout, sink), daemon=True)
        reader.start()
        token = subprocess.run(
            [str(PA), "token", "--org", org, "--user", "alice"],
            cwd=ROOT / "docs",
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        yield DevServer(
            f"http://127.0.0.1:{env['PA_PORT']}", f"http://127.0.0.1:{env['PA_MOTO_PORT']}", env, token.splitlines()[-1]
        )
    finally:
        proc.send_signal(signal.SIGINT)
        if reader is not None:
            proc.wait(timeout=60)
            reader.join(timeout=10)  # it read the rest
        else:  # it stopped before it was ready
            proc.communicate(timeout=60)
