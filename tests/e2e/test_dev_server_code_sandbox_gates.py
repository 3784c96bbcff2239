"""`run_python`'s gates over `pa dev` as a user starts it (driven over HTTP only, the demo model told what to call
with its `/tool NAME {json}` syntax): where bubblewrap is not on the PATH, `/health/deps` says the code sandbox is
not ok and why, and no run is offered the tool (code never runs unconfined); where the sandbox's trust tier is below
a restricted chat's, the call is the tool's error and no code runs (no sandbox seconds metered)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import running_pa_dev

pytestmark = pytest.mark.timeout(300)


def _path_without_bwrap(farm: Path) -> str:
    """The PATH with every folder that holds `bwrap` replaced by a folder of links to all its other programs."""
    folders = []
    for index, folder in enumerate(os.environ["PATH"].split(os.pathsep)):
        if not (Path(folder) / "bwrap").exists():
            folders.append(folder)
            continue
        linked = farm / str(index)
        linked.mkdir(parents=True)
        for program in Path(folder).iterdir():
            if program.name != "bwrap":
                (linked / program.name).symlink_to(program)
        folders.append(str(linked))
    return os.pathsep.join(folders)


def _run(http: httpx.Client, chat_id: str, message: str) -> tuple[str, list[Any]]:
    started = http.post(f"/api/v1/chats/{chat_id}/runs", json={"message": message, "mode": "inline"})
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    with http.stream("GET", f"/api/v1/runs/{run_id}/events") as events:
        seen = [json.loads(line[5:]) for line in events.iter_lines() if line.startswith("data:")]
    assert seen[-1]["type"] == "RUN_FINISHED", seen[-1]
    return run_id, seen


def _answer(events: list[Any]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def test_without_bubblewrap_the_sandbox_is_not_ok_and_no_run_is_offered_the_tool(tmp_path: Path) -> None:
    path = _path_without_bwrap(tmp_path / "bin")
    with (
        running_pa_dev(tmp_path / "data", env_extra={"PATH": path}) as server,
        httpx.Client(base_url=server.url, headers=server.auth, timeout=120) as http,
    ):
        deps = http.get("/health/deps", headers=server.auth_for("ops", "admin")).json()  # detail: platform admins
        (sandbox,) = [c for c in deps["checks"] if c["name"] == "code_sandbox"]
        assert sandbox["ok"] is False and "bubblewrap (bwrap) is not installed" in sandbox["detail"], sandbox
        chat_id = http.post("/api/v1/chats", json={"title": "no sandbox"}).json()["id"]
        run_id, events = _run(http, chat_id, '/tool run_python {"code": "1 + 1"}')
        assert not [e for e in events if e["type"] == "TOOL_CALL_START"]
        assert "The tool `run_python` is not offered to me" in _answer(events)
        view = http.get(f"/api/v1/runs/{run_id}").json()
        assert "run_python" not in [t["name"] for t in view["tools"]] and view["sandbox_seconds"] == 0


def test_a_restricted_chat_above_the_sandboxs_tier_gets_a_tool_error_and_no_code_runs(tmp_path: Path) -> None:
    with (
        running_pa_dev(tmp_path / "data", env_extra={"PA_SANDBOX_TIER": "1"}) as server,
        httpx.Client(base_url=server.url, headers=server.auth, timeout=120) as http,
    ):
        chat = http.post("/api/v1/chats", json={"title": "board figures", "classification": "restricted"})
        assert chat.status_code == 201, chat.text
        code = "open('/tmp/ran', 'w').write('x')\nprint('the restricted figures')"
        run_id, events = _run(http, chat.json()["id"], "/tool run_python " + json.dumps({"code": code}))
        assert [e for e in events if e["type"] == "TOOL_CALL_START"]  # offered and called...
        answer = _answer(events)
        (result,) = [json.loads(e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT"]
        assert set(result) == {"error"} and "needs trust tier 2" in result["error"] and "tier 1" in result["error"]
        assert "Answer without running code" in answer
        assert "the restricted figures" not in answer
        view = http.get(f"/api/v1/runs/{run_id}").json()
        assert view["sandbox_seconds"] == 0  # ...and refused before any code ran
        usage = http.get("/api/v1/usage").json()
        assert "sandbox_seconds" in json.dumps(usage) and not _positive_sandbox_seconds(usage), usage


def _positive_sandbox_seconds(value: Any) -> bool:
    if isinstance(value, dict):
        return any(
            (k == "sandbox_seconds" and isinstance(v, int | float) and v > 0) or _positive_sandbox_seconds(v)
            for k, v in value.items()
        )
    return isinstance(value, list) and any(_positive_sandbox_seconds(v) for v in value)
