"""A durable run's sandbox session across an approval wait on `pa dev`, over HTTP only: a model on loopback (an org
provider) sets a variable with `run_python`, calls a tool an org rule makes ask a person, and after the approval
reads the variable with `run_python` again. The step that asked ends with its kernel closed; the next step restores
the session from the run's record in the bucket (docs/sandbox.md)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, running_fake_provider

pytestmark = pytest.mark.timeout(400)


def script(messages: list[dict[str, Any]]) -> dict[str, Any]:
    results = [m for m in messages if m.get("role") == "tool"]
    calls = [
        ("run_python", {"code": "secret = 6 * 7"}),
        ("send_demo_message", {"to": "bob", "text": "the secret is set"}),
        ("run_python", {"code": "secret + 1"}),
    ]
    if len(results) < len(calls):
        name, args = calls[len(results)]
        return {"tool_calls": [{"name": name, "arguments": args}]}
    return {"content": f"last result: {results[-1]['content']}"}


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    with running_fake_provider(script) as running:
        yield running


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-durable-sandbox")) as server:
        yield server


def _setup(dev: DevServer, provider: FakeProvider) -> str:
    """The org's provider (the scripted model) and a rule that makes the demo message ask a person first."""
    with httpx.Client(base_url=dev.url, headers=dev.auth_for("alice", "org-admin"), timeout=30) as http:
        body = {"name": "scripted", "kind": "openai-compatible", "base_url": provider.base_url, "trust_tier": 2}
        created = http.post("/api/v1/admin/providers", json=body)
        assert created.status_code == 201, created.text
        model = http.post(f"/api/v1/admin/providers/{created.json()['id']}/models", json={"name": "fake-model"})
        assert model.status_code == 201, model.text
        rule = http.post("/api/v1/admin/tool-policies", json={"tool": "send_demo_message", "effect": "ask"})
        assert rule.status_code == 201, rule.text
    return "scripted:fake-model"


def _wait_for(http: httpx.Client, path: str, done: Any, seconds: float = 120) -> Any:
    """GET `path` until `done(body)` holds (bounded)."""
    deadline = time.monotonic() + seconds
    while True:
        body = http.get(path).json()
        if done(body) or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def test_a_variable_set_before_an_approval_is_read_after_it(dev: DevServer, provider: FakeProvider) -> None:
    model = _setup(dev, provider)
    with httpx.Client(base_url=dev.url, headers=dev.auth_for("alice", "org-admin"), timeout=60) as http:
        chat = http.post("/api/v1/chats", json={"title": "durable sandbox"}).json()
        body: dict[str, Any] = {"message": "set it, tell bob, read it", "model": model, "mode": "durable"}
        body["tools"] = ["run_python", "send_demo_message"]
        started = http.post(f"/api/v1/chats/{chat['id']}/runs", json=body)
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        pending = _wait_for(http, "/api/v1/approvals", lambda b: any(i["run_id"] == run_id for i in b["items"]))
        (approval,) = [i for i in pending["items"] if i["run_id"] == run_id]
        decided = http.post(f"/api/v1/approvals/{approval['id']}", json={"decision": "approve"})
        assert decided.status_code == 200, decided.text
        run = _wait_for(http, f"/api/v1/runs/{run_id}", lambda b: b["status"] in ("succeeded", "failed", "cancelled"))
        assert (run["status"], run["mode"]) == ("succeeded", "durable"), run
    sent = [m for m in provider.requests[-1]["messages"] if m.get("role") == "tool"]
    first, after = json.loads(sent[0]["content"]), json.loads(sent[-1]["content"])
    assert first["error"] is None and first["value"] is None  # `secret = 6 * 7`, before the wait
    assert (after["error"], after["value"]) == (None, "43")  # the variable outlived the wait
    assert run["sandbox_seconds"] > 0
