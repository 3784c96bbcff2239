"""Projects (issue 38, item 2) on `pa dev` as people use them, with a model provider on loopback that records what
it is sent: alice makes a project with instructions, bob reads its chats as a viewer and cannot post in them,
carol (an editor) can, mallory (another org) gets 404; a run in a project's chat sends the project's instructions
to the model in its system message (never as a user turn), and a memory saved there comes back only in that
project's chats, while alice's memory from outside stays outside."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, Reply, last_user_text, running_fake_provider, tool_results
from tests.png import tiny_png

RULE = "PROJECT-RULE-4411: answer in exactly three bullet points."
PROJECT_FACT = "The launch codename is Pelican-77"
OUTSIDE_FACT = "Lives in Ghent-5150"


def _script(messages: list[dict[str, Any]]) -> Reply:
    """`remember: <fact>` calls the `remember` tool once, then says it is noted; anything else is echoed."""
    text = last_user_text(messages)
    if text.startswith("remember: ") and not tool_results(messages):
        return {"tool_calls": [{"name": "remember", "arguments": {"fact": text.removeprefix("remember: ")}}]}
    return {"content": "Noted." if tool_results(messages) else f"echo: {text}"}


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    with running_fake_provider(_script) as fake:
        yield fake


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-projects")) as server:
        yield server


@pytest.fixture(scope="module")
def model(dev: DevServer, provider: FakeProvider) -> str:
    """The loopback provider, registered by an org admin."""
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


def _turn(http: httpx.Client, headers: dict[str, str], chat: str, message: str, model: str) -> list[dict[str, Any]]:
    """One answered turn; its events."""
    body = {"message": message, "model": model, "mode": "inline"}
    started = _ok(http.post(f"/api/v1/chats/{chat}/runs", headers=headers, json=body), 202)
    with http.stream("GET", started["events_url"], headers=headers) as stream:
        events = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return events


def _sent(provider: FakeProvider, since: int) -> list[dict[str, Any]]:
    """The messages of each model request since the `since`-th."""
    return [m for body in provider.requests[since:] for m in body["messages"]]


def _by_role(messages: list[dict[str, Any]], *roles: str) -> str:
    return "\n".join(str(m.get("content")) for m in messages if m.get("role") in roles)


@pytest.mark.timeout(300)
def test_a_project_shares_its_chats_instructions_and_memories_with_its_members_only(
    dev: DevServer, provider: FakeProvider, model: str
) -> None:
    alice, bob, carol = dev.auth, dev.auth_for("bob"), dev.auth_for("carol")
    mallory = dev.auth_for("mallory", org="rival")
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        ids = {name: _ok(http.get("/api/v1/me", headers=h))["user_id"] for name, h in (("bob", bob), ("carol", carol))}
        _ok(http.post("/api/v1/me/memories", headers=alice, json={"text": OUTSIDE_FACT}), 201)
        project = _ok(http.post("/api/v1/projects", headers=alice, json={"name": "Launch", "instructions": RULE}), 201)
        pid = project["id"]
        members = f"/api/v1/projects/{pid}/members"
        _ok(http.post(members, headers=alice, json={"user_id": ids["bob"], "role": "viewer"}))
        _ok(http.post(members, headers=alice, json={"user_id": ids["carol"], "role": "editor"}))

        first = _ok(http.post("/api/v1/chats", headers=alice, json={"title": "Launch plan"}), 201)["id"]
        second = _ok(http.post("/api/v1/chats", headers=alice, json={"title": "Launch copy"}), 201)["id"]
        outside = _ok(http.post("/api/v1/chats", headers=alice, json={"title": "Elsewhere"}), 201)["id"]
        for chat in (first, second):
            assert (
                _ok(http.patch(f"/api/v1/chats/{chat}", headers=alice, json={"project_id": pid}))["project_id"] == pid
            )

        _turn(http, alice, first, f"remember: {PROJECT_FACT}", model)
        before = len(provider.requests)
        _turn(http, alice, second, "what is the plan?", model)
        inside = _sent(provider, before)
        assert RULE in _by_role(inside, "system") and RULE not in _by_role(inside, "user", "assistant")
        assert PROJECT_FACT in _by_role(inside, "system") and OUTSIDE_FACT not in _by_role(inside, "system")

        before = len(provider.requests)
        _turn(http, alice, outside, "and outside?", model)
        elsewhere = _by_role(_sent(provider, before), "system")
        assert RULE not in elsewhere and PROJECT_FACT not in elsewhere and OUTSIDE_FACT in elsewhere

        # Bob (viewer) reads the project's chats and cannot post; Carol (editor) posts and gets the instructions.
        listed = _ok(http.get("/api/v1/chats", headers=bob, params={"project_id": pid}))["items"]
        assert {c["id"] for c in listed} == {first, second}
        transcript = _ok(http.get(f"/api/v1/chats/{first}/messages", headers=bob))["items"]
        assert any(PROJECT_FACT in str(item.get("text")) for item in transcript)
        refused = http.post(f"/api/v1/chats/{second}/runs", headers=bob, json={"message": "hi", "model": model})
        assert (refused.status_code, refused.json()["code"]) == (403, "project_read_only")
        before = len(provider.requests)
        _turn(http, carol, second, "carol's turn", model)
        assert RULE in _by_role(_sent(provider, before), "system")

        # Mallory, another org: nothing of it exists.
        for path in (f"/api/v1/projects/{pid}", f"/api/v1/chats/{first}", f"/api/v1/chats/{first}/messages"):
            assert http.get(path, headers=mallory).status_code == 404
        assert pid not in {p["id"] for p in _ok(http.get("/api/v1/projects", headers=mallory))["items"]}


def _upload(form: dict[str, Any], name: str, data: bytes) -> None:
    """The browser's form POST of a file, straight to the bucket (moto)."""
    sent = httpx.post(form["url"], data=form["fields"], files={"file": (name, data, "image/png")}, timeout=30)
    assert sent.status_code in (200, 201, 204), sent.text


@pytest.mark.timeout(300)
def test_an_editor_attaches_in_a_project_chat_and_every_member_opens_the_file(dev: DevServer) -> None:
    alice, bob, carol = dev.auth, dev.auth_for("bob"), dev.auth_for("carol")
    mallory = dev.auth_for("mallory", org="rival")
    image = tiny_png(3, 2)
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        ids = {name: _ok(http.get("/api/v1/me", headers=h))["user_id"] for name, h in (("bob", bob), ("carol", carol))}
        pid = _ok(http.post("/api/v1/projects", headers=alice, json={"name": "Offsite"}), 201)["id"]
        members = f"/api/v1/projects/{pid}/members"
        _ok(http.post(members, headers=alice, json={"user_id": ids["bob"], "role": "viewer"}))
        _ok(http.post(members, headers=alice, json={"user_id": ids["carol"], "role": "editor"}))
        chat = _ok(http.post("/api/v1/chats", headers=alice, json={"title": "Offsite agenda"}), 201)["id"]
        _ok(http.patch(f"/api/v1/chats/{chat}", headers=alice, json={"project_id": pid}))

        # Carol (an editor) attaches a picture in Alice's chat and sends it: the run sees it.
        body = {"filename": "whiteboard.png", "content_type": "image/png", "size": len(image)}
        made = _ok(http.post(f"/api/v1/chats/{chat}/attachments", headers=carol, json=body), 201)
        _upload(made["upload"], "whiteboard.png", image)
        run = {"message": "what is on the whiteboard?", "model": "offline:demo", "mode": "inline"}
        started = _ok(
            http.post(f"/api/v1/chats/{chat}/runs", headers=carol, json={**run, "attachments": [made["id"]]}), 202
        )
        with http.stream("GET", started["events_url"], headers=carol) as stream:
            events = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
        assert events[-1]["type"] == "RUN_FINISHED", events[-1]
        items = _ok(http.get(f"/api/v1/chats/{chat}/messages", headers=bob))["items"]
        answer = " ".join(str(i.get("text")) for i in items if i["role"] == "assistant")
        assert f"I can see 1 attached image(s) (image/png, {len(image)} bytes)" in answer
        assert [f["id"] for i in items for f in i.get("attachments") or []] == [made["id"]]

        # Bob (a viewer) opens it, and cannot attach; Mallory (another org) finds nothing.
        link = _ok(http.get(f"/api/v1/attachments/{made['id']}/download", headers=bob))
        assert httpx.get(link["url"], timeout=30).content == image
        refused = http.post(f"/api/v1/chats/{chat}/attachments", headers=bob, json=body)
        assert (refused.status_code, refused.json()["code"]) == (403, "project_read_only")
        for path in (f"/api/v1/attachments/{made['id']}", f"/api/v1/attachments/{made['id']}/download"):
            assert http.get(path, headers=mallory).status_code == 404
        assert http.post(f"/api/v1/chats/{chat}/attachments", headers=mallory, json=body).status_code == 404

        # Removed from the project, Bob gets 404 for the file too.
        _ok(http.delete(f"{members}/{ids['bob']}", headers=alice))
        gone = http.get(f"/api/v1/attachments/{made['id']}/download", headers=bob)
        assert (gone.status_code, gone.json()["code"]) == (404, "attachment_not_found")
