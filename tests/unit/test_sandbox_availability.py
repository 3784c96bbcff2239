"""Where no sandbox can run, `run_python` is not offered and the reason is said (never code run unconfined); the
sandbox function refuses an org other than the first its environment served; settings reach the limits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from functions.sandbox import app as sandbox_function
from personal_agent.sandbox import bubblewrap, sessions
from personal_agent.sandbox.config import SandboxConfig
from personal_agent.tools.registry import default_tool_names, get_tool


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    bubblewrap.probe.cache_clear()
    sessions.backend.cache_clear()
    yield
    bubblewrap.probe.cache_clear()
    sessions.backend.cache_clear()


def test_without_bubblewrap_the_tool_is_not_offered_and_says_why(
    monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda name: None)
    found = sessions.availability()
    assert not found.ok and "bubblewrap (bwrap) is not installed" in found.detail
    assert get_tool("run_python") is None and "run_python" not in default_tool_names()


def test_where_bwrap_fails_to_set_up_its_sandbox_the_tool_is_not_offered(
    monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    real = bubblewrap.command

    def failing(*args: object) -> list[str]:  # bwrap exits non-zero (here: a user namespace fd that is not one)
        argv = real(*args)  # type: ignore[arg-type]
        return [argv[0], "--userns", "999", *argv[1:]]

    monkeypatch.setattr(bubblewrap, "command", failing)
    found = sessions.availability()
    assert not found.ok and found.detail.startswith("bubblewrap cannot create namespaces here")
    assert get_tool("run_python") is None


def test_here_the_local_sandbox_is_available(fresh_probe: None) -> None:
    found = sessions.availability()
    assert found.ok and found.backend == "local" and "seccomp" in found.features, found.detail
    assert get_tool("run_python") is not None and "run_python" in default_tool_names()


def test_settings_choose_the_backend_and_its_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PA_ENV", "aws")
    monkeypatch.delenv("PA_SANDBOX_FUNCTION", raising=False)
    assert SandboxConfig.from_environment().backend == "off"
    monkeypatch.setenv("PA_SANDBOX_FUNCTION", "stack-sandbox")
    monkeypatch.setenv("PA_SANDBOX_WALL_SECONDS", "12.5")
    monkeypatch.setenv("PA_SANDBOX_PROCESSES", "16")
    config = SandboxConfig.from_environment()
    assert (config.backend, config.function_name, config.default_enabled) == ("lambda", "stack-sandbox", False)
    assert (config.limits.wall_seconds, config.limits.processes) == (12.5, 16)
    monkeypatch.setenv("PA_ENV", "local")
    monkeypatch.setenv("PA_SANDBOX_BACKEND", "off")
    assert SandboxConfig.from_environment().backend == "off"


def test_the_sandbox_function_serves_one_org_per_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_function, "_pinned", {})
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    event = {"org_id": "org-a", "code": "1", "limits": {}}
    # Outside Lambda it runs nothing (it would wipe /tmp and kill processes), but the environment is pinned.
    assert sandbox_function.handler(event, None) == {"error_code": "not_in_lambda"}
    assert sandbox_function.handler({**event, "org_id": "org-b"}, None) == {"error_code": "environment_pinned"}
