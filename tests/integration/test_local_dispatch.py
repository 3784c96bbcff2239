"""Local Lambda dispatch: handlers load whatever `sys.path` holds, and a function that cannot be loaded ends its
run `failed` at once instead of leaving it queued behind a state machine that can never record the failure."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from personal_agent.local.lambda_registry import REPO_ROOT, FunctionSpec
from tests.auth import auth_headers
from tests.sse import read_events


def test_handlers_load_from_outside_the_repo_without_it_on_sys_path(tmp_path: Any) -> None:
    probe = (
        "import sys\n"
        f"assert not any(p in ('', {str(REPO_ROOT)!r}) for p in sys.path[1:]), sys.path\n"
        "from personal_agent.local.lambda_registry import LambdaRegistry\n"
        "registry = LambdaRegistry.from_template()\n"
        "for name in ('pa-steps', 'pa-run-worker', 'pa-triggers', 'pa-api'):\n"
        "    print(name, callable(registry.resolve(name)[1]))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PA_ENV": "test"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pa-steps", "True", "pa-run-worker", "True", "pa-triggers", "True", "pa-api", "True"]


@pytest.fixture
def unloadable_steps(stack: Any) -> Iterator[None]:
    """The stack's steps function pointed at a module that does not exist (as a broken package would be)."""
    registry = stack.registry
    good = registry._specs["pa-steps"]
    broken = FunctionSpec(good.logical_id, good.folder, "functions.steps.missing_module", good.attribute)
    for key in (good.local_name, good.logical_id):
        registry._specs[key] = broken
    loaded = registry._loaded.pop(good.local_name, None)
    try:
        yield
    finally:
        for key in (good.local_name, good.logical_id):
            registry._specs[key] = good
        if loaded is not None:
            registry._loaded[good.local_name] = loaded


async def test_a_durable_run_whose_step_cannot_load_ends_failed_with_a_clear_code(
    http: httpx.AsyncClient, make_tenant: Any, unloadable_steps: None
) -> None:
    headers = auth_headers(make_tenant())
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    started = await http.post(
        f"/api/v1/chats/{chat['id']}/runs", json={"message": "hello", "mode": "durable"}, headers=headers
    )
    assert started.status_code == 202
    frames = await read_events(http, started.json()["events_url"], headers)
    assert frames[-1].type == "RUN_ERROR" and frames[-1].data["code"] == "function_unavailable"
    run = (await http.get(started.json()["status_url"], headers=headers)).json()
    assert run["status"] == "failed" and run["error"]["code"] == "function_unavailable"
