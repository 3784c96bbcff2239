"""`pipx install` / `uv tool install` of the project gives `pa` with the terminal client and its few dependencies, the
server staying optional (`personal-agent[server]`): the test builds the wheel, installs it into a fresh venv of its
own (uv, from the package index, as `uv tool install` does), checks what came with it, and runs that `pa` against
`pa dev` as a user on another machine would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.pa_dev import ROOT, DevServer, running_pa_dev
from tests.e2e.terminal_client import personal_token

pytestmark = pytest.mark.timeout(600)  # a wheel build and an install from the index, then `pa dev`
UV = ROOT / ".tools" / "bin" / "uv"  # `make bootstrap` installs it
CLIENT = {"personal-agent", "httpx", "rich", "textual", "keyring"}
SERVER_ONLY = {"fastapi", "starlette", "sqlalchemy", "pydantic", "pydantic-ai-slim", "psycopg", "boto3", "redis", "mcp"}


def _run(argv: list[str | Path], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, f"{argv}: {done.stderr[-2000:]}"
    return done


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding only the wheel of this checkout and what it depends on."""
    tmp = tmp_path_factory.mktemp("client-install")
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH"}}
    env["UV_PYTHON_DOWNLOADS"] = "never"
    _run([UV, "build", "--wheel", "--out-dir", tmp / "dist", ROOT], env, tmp)
    (wheel,) = (tmp / "dist").glob("personal_agent-*.whl")
    _run([UV, "venv", "--python", sys.executable, tmp / "venv"], env, tmp)
    _run([UV, "pip", "install", "--python", tmp / "venv" / "bin" / "python", wheel], env, tmp)
    return tmp / "venv"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev")) as dev:
        yield dev


def _user_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's shell on another machine: nothing of this checkout's, no keyring daemon."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "PA_CONFIG_DIR": str(home / "config")}
    return env | {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"} | extra


def test_the_wheel_brings_the_client_and_not_the_server(client_venv: Path, tmp_path: Path) -> None:
    listed = _run(
        [UV, "pip", "list", "--python", client_venv / "bin" / "python", "--format", "json"], {**os.environ}, tmp_path
    )
    installed = {p["name"] for p in json.loads(listed.stdout)}
    assert CLIENT <= installed
    assert installed & SERVER_ONLY == set(), sorted(installed)
    assert len(installed) < 40, sorted(installed)  # the client's few dependencies and theirs

    pa = client_venv / "bin" / "pa"
    env = _user_env(tmp_path)
    usage = _run([pa, "--help"], env, tmp_path).stdout
    assert all(command in usage for command in ("login", "logout", "run", "runs", "chat"))
    for command in ("run", "chat", "login"):
        assert f"usage: pa {command}" in _run([pa, command, "--help"], env, tmp_path).stdout
    _run([client_venv / "bin" / "python", "-c", "import personal_agent.terminal.chat_app"], env, tmp_path)  # Textual
    dev = subprocess.run([pa, "dev"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert dev.returncode == 2 and "install 'personal-agent[server]'" in dev.stderr, dev.stderr


def test_the_installed_client_runs_against_a_deployment(client_venv: Path, server: DevServer, tmp_path: Path) -> None:
    pa = client_venv / "bin" / "pa"
    env = _user_env(tmp_path, PA_URL=server.url, PA_TOKEN=personal_token(server, "ines"))
    ran = _run([pa, "run", "--json", "what time is it?"], env, tmp_path)
    doc = json.loads(ran.stdout)
    assert doc["status"] == "succeeded" and "The time is" in doc["answer"], doc
    got = json.loads(_run([pa, "runs", "get", doc["run_id"]], env, tmp_path).stdout)
    assert got["status"] == "succeeded"
    signed_in = _run([pa, "login", "--token", env["PA_TOKEN"]], {**env, "PA_TOKEN": ""}, tmp_path)
    assert "as ines (org e2e)" in signed_in.stdout
