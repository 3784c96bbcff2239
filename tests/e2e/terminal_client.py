"""Helpers for the terminal client's end-to-end tests: `pa` client commands as a user types them, against `pa dev`."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.pa_dev import PA, ROOT, DevServer


def client_env(server: DevServer, config_dir: Path, **extra: str) -> dict[str, str]:
    """The server's env (for `pa token`), pointed at the server, with a config dir of its own and no keyring (the
    file fallback; a desktop keyring is not there in CI)."""
    env = {k: v for k, v in server.env.items() if k != "PA_TOKEN"}
    env.update(PA_URL=server.url, PA_CONFIG_DIR=str(config_dir), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    env.update(extra)
    return env


def pa(
    env: dict[str, str], *args: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PA), *args], cwd=ROOT / "docs", env=env, input=stdin, capture_output=True, text=True, timeout=timeout
    )


def wait_for(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def pending_approval(http: httpx.Client, auth: dict[str, str], seen: set[str] | None = None) -> dict[str, Any]:
    """The first pending approval of the caller's not in `seen` (which it joins)."""
    seen = set() if seen is None else seen

    def first() -> dict[str, Any] | None:
        items = http.get("/api/v1/approvals", headers=auth).json()["items"]
        fresh = [a for a in items if a["id"] not in seen]
        if fresh:
            seen.add(fresh[0]["id"])
        return fresh[0] if fresh else None

    found: dict[str, Any] = wait_for(first, "a pending approval")
    return found


def personal_token(server: DevServer, user: str) -> str:
    """A personal access token of `user` (what CI puts in PA_TOKEN; it outlives the dev tokens of these tests)."""
    created = httpx.post(
        f"{server.url}/api/v1/me/tokens", json={"name": "ci"}, headers=server.auth_for(user), timeout=30
    )
    created.raise_for_status()
    token: str = created.json()["token"]
    return token
