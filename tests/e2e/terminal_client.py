"""Helpers for the terminal client's end-to-end tests: `pa` client commands as a user types them, against `pa dev`."""

from __future__ import annotations

import json
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


def scripted_model(server: DevServer, base_url: str, name: str, **model: Any) -> str:
    """An org provider `name` at a scripted model server on loopback (tests/fake_provider.py) with one model,
    `<name>-model` (`model`: its other fields, e.g. prices); the model's id for `--model`. Each provider's model has a
    name of its own: usage is priced by the answering model's name, and two models of one name in a run's fallback
    chain price it as unknown (`engine/usage.py`)."""
    admin = server.auth_for("root", "org-admin")
    with httpx.Client(base_url=server.url, headers=admin, timeout=30) as http:
        body = {"name": name, "kind": "openai-compatible", "base_url": base_url, "trust_tier": 2}
        provider = http.post("/api/v1/admin/providers", json=body)
        assert provider.status_code == 201, provider.text
        models = f"/api/v1/admin/providers/{provider.json()['id']}/models"
        added = http.post(models, json={"name": f"{name}-model", **model})
        assert added.status_code == 201, added.text
    return f"{name}:{name}-model"


def stream_log(server: DevServer, run_id: str, auth: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """A finished run's whole event stream as the server keeps it, read raw: (SSE id, event) each, in order."""
    entries: list[tuple[str, dict[str, Any]]] = []
    with httpx.stream("GET", f"{server.url}/api/v1/runs/{run_id}/events", headers=auth, timeout=30) as response:
        assert response.status_code == 200
        event_id, data = "", []
        for line in response.iter_lines():
            if line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif line == "" and data:
                entries.append((event_id, json.loads("\n".join(data))))
                event_id, data = "", []
    return entries
