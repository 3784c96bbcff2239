"""A run in a project's chat is followed live by the project's members (issue 38, item 2), on `pa dev` with a model
provider on loopback whose answer waits until the test lets it go: bob, a viewer, reads alice's running run and
streams its events to its end as they come; he may not stop it; mallory (another org) and dave (alice's org, no
member) get 404; once bob is removed from the project, a stream he holds open is ended (CUSTOM `access_revoked`)
and a new request is 404. Each chat says whether its reader may post in it (`can_post`)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, Reply, last_user_text, running_fake_provider

HELD = "hold until released"
ANSWER = "the answer that was held back"
HEARTBEAT = 1.0  # seconds: an open stream re-checks its reader's access at least this often


class Gate:
    """Holds each `HELD` request until `release` (one request at a time: the script blocks the fake's loop)."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.opened = threading.Event()

    def script(self, messages: list[dict[str, Any]]) -> Reply:
        text = last_user_text(messages)
        if text != HELD:
            return {"content": f"echo: {text}"}
        self.arrived.set()
        assert self.opened.wait(90), "the test never released the held answer"
        self.opened.clear()
        self.arrived.clear()
        return {"content": ANSWER}

    def release(self) -> None:
        """Let the waiting request answer (nothing when none waits: the next one still waits)."""
        if self.arrived.is_set():
            self.opened.set()


@pytest.fixture(scope="module")
def gate() -> Gate:
    return Gate()


@pytest.fixture(scope="module")
def provider(gate: Gate) -> Iterator[FakeProvider]:
    with running_fake_provider(gate.script) as fake:
        yield fake


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    extra = {"PA_SSE_HEARTBEAT_SECONDS": str(HEARTBEAT)}
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-project-runs"), env_extra=extra) as server:
        yield server


@pytest.fixture(scope="module")
def model(dev: DevServer, provider: FakeProvider) -> str:
    with httpx.Client(base_url=dev.url, headers=dev.auth_for("alice", "org-admin"), timeout=30) as http:
        body = {"name": "loop", "kind": "openai-compatible", "base_url": provider.base_url, "trust_tier": 2}
        made = http.post("/api/v1/admin/providers", json=body)
        assert made.status_code == 201, made.text
        added = http.post(f"/api/v1/admin/providers/{made.json()['id']}/models", json={"name": "m1"})
        assert added.status_code == 201, added.text
    return "loop:m1"


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


def _code(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json().get("code", "")


def _held_run(http: httpx.Client, alice: dict[str, str], chat: str, model: str, gate: Gate) -> dict[str, Any]:
    """Alice's run in `chat`, its model call waiting at the gate."""
    body = {"message": HELD, "model": model, "mode": "inline"}
    started = _ok(http.post(f"/api/v1/chats/{chat}/runs", headers=alice, json=body), 202)
    assert gate.arrived.wait(60), "the run never asked the model"
    return dict(started)


def _frames(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.startswith("data:"):
            yield json.loads(line[5:])


def _until(frames: Iterator[dict[str, Any]], wanted: str) -> list[dict[str, Any]]:
    """Frames up to the first of type `wanted` (or CUSTOM name `wanted`), that one included."""
    seen = []
    for frame in frames:
        seen.append(frame)
        if wanted in (frame.get("type"), frame.get("name")):
            return seen
    raise AssertionError(f"the stream ended without {wanted}: {[f.get('type') for f in seen]}")


@pytest.mark.timeout(300)
def test_project_members_follow_a_live_run_read_only_and_nobody_else_sees_it(
    dev: DevServer, model: str, gate: Gate
) -> None:
    alice, bob, dave = dev.auth, dev.auth_for("bob"), dev.auth_for("dave")
    mallory = dev.auth_for("mallory", org="rival")
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        bob_id = _ok(http.get("/api/v1/me", headers=bob))["user_id"]
        _ok(http.get("/api/v1/me", headers=dave))
        pid = _ok(http.post("/api/v1/projects", headers=alice, json={"name": "Live"}), 201)["id"]
        _ok(http.post(f"/api/v1/projects/{pid}/members", headers=alice, json={"user_id": bob_id, "role": "viewer"}))
        chat = _ok(http.post("/api/v1/chats", headers=alice, json={"title": "Live plan"}), 201)["id"]
        _ok(http.patch(f"/api/v1/chats/{chat}", headers=alice, json={"project_id": pid}))
        assert _ok(http.get(f"/api/v1/chats/{chat}", headers=alice))["can_post"] is True
        assert _ok(http.get(f"/api/v1/chats/{chat}", headers=bob))["can_post"] is False
        listed = _ok(http.get("/api/v1/chats", headers=bob, params={"project_id": pid}))["items"]
        assert [(c["id"], c["can_post"]) for c in listed] == [(chat, False)]

        started = _held_run(http, alice, chat, model, gate)
        run_id, events = started["run_id"], started["events_url"]
        try:
            assert _ok(http.get(f"/api/v1/runs/{run_id}", headers=bob))["status"] == "running"
            for outsider in (mallory, dave):
                assert _code(http.get(f"/api/v1/runs/{run_id}", headers=outsider)) == (404, "run_not_found")
                assert http.get(events, headers=outsider).status_code == 404
            assert _code(http.post(f"/api/v1/runs/{run_id}/cancel", headers=bob)) == (404, "run_not_found")
            with http.stream("GET", events, headers=bob) as stream:
                assert stream.status_code == 200
                frames = _frames(stream.iter_lines())
                assert _until(frames, "RUN_STARTED")[-1]["type"] == "RUN_STARTED"  # attached while it waits
                gate.release()
                rest = _until(frames, "RUN_FINISHED")
            assert ANSWER in "".join(f.get("delta", "") for f in rest if f["type"] == "TEXT_MESSAGE_CONTENT")
        finally:
            gate.release()  # never leave the fake provider blocked

        # A stream bob holds open ends once he is removed; after that, nothing of the run is his to read.
        second = _held_run(http, alice, chat, model, gate)
        try:
            with http.stream("GET", second["events_url"], headers=bob) as stream:
                frames = _frames(stream.iter_lines())
                _until(frames, "RUN_STARTED")
                removed = time.monotonic()
                _ok(http.delete(f"/api/v1/projects/{pid}/members/{bob_id}", headers=alice))
                revoked = _until(frames, "access_revoked")[-1]
                assert revoked["value"]["code"] == "run_not_found"
                assert time.monotonic() - removed < 10 * HEARTBEAT
                assert list(frames) == []  # and the stream is closed
        finally:
            gate.release()
        for run in (run_id, second["run_id"]):
            assert _code(http.get(f"/api/v1/runs/{run}", headers=bob)) == (404, "run_not_found")
            assert http.get(f"/api/v1/runs/{run}/events", headers=bob).status_code == 404
        assert _code(http.get(f"/api/v1/chats/{chat}", headers=bob)) == (404, "chat_not_found")
