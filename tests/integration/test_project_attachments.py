"""Files in a project's chat (issue 38): an editor of the project attaches an image in the owner's chat (the file is
the editor's), the run sees it, and so does the next run of another member; every member, viewers too, reads and
downloads the chat's files; a viewer cannot attach (403 `project_read_only`); a colleague outside the project and
another org's member get 404, and so does a member once removed. A chat in no project keeps its files its owner's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import BinaryContent, ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.members import colleague_of
from tests.png import tiny_png
from tests.sse import read_events

IMAGE = tiny_png()


@pytest.fixture
def vision_model() -> Iterator[tuple[str, list[list[bytes]]]]:
    """A scripted model that can see: what images each request carried."""
    seen: list[list[bytes]] = []
    model_id = f"test:{uuid.uuid4().hex[:8]}"

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        prompts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)]
        images = [
            c.data for p in prompts if not isinstance(p.content, str) for c in p.content if isinstance(c, BinaryContent)
        ]
        seen.append(images)
        yield f"I see {len(images)} image(s)."

    register_model(model_id, lambda: FunctionModel(stream_function=stream, model_name="scripted"), tags=("vision",))
    try:
        yield model_id, seen
    finally:
        unregister_model(model_id)


def _code(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json().get("code", "")


async def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


async def _attach(http: httpx.AsyncClient, headers: dict[str, str], chat_id: str) -> httpx.Response:
    body = {"filename": "whiteboard.png", "content_type": "image/png", "size": len(IMAGE)}
    return await http.post(f"/api/v1/chats/{chat_id}/attachments", json=body, headers=headers)


async def _upload(form: dict[str, Any]) -> None:
    async with httpx.AsyncClient() as s3:
        posted = await s3.post(form["url"], data=form["fields"], files={"file": ("w.png", IMAGE, "image/png")})
    assert posted.status_code in (200, 201, 204), posted.text


async def _run(http: httpx.AsyncClient, headers: dict[str, str], chat_id: str, model: str, ids: list[str]) -> str:
    body = {"message": "what is on the whiteboard?", "model": model, "mode": "inline", "attachments": ids}
    started = await http.post(f"/api/v1/chats/{chat_id}/runs", json=body, headers=headers)
    assert started.status_code == 202, started.text
    frames = await read_events(http, started.json()["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    return str(started.json()["run_id"])


async def _fetched(http: httpx.AsyncClient, headers: dict[str, str], attachment_id: str) -> bytes:
    link = await _ok(await http.get(f"/api/v1/attachments/{attachment_id}/download", headers=headers))
    async with httpx.AsyncClient() as s3:
        got = await s3.get(link["url"])
    assert got.status_code == 200, got.text
    return got.content


async def test_members_of_a_project_share_its_chats_files(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, vision_model: tuple[str, list[list[bytes]]]
) -> None:
    model, seen = vision_model
    alice, mallory = make_tenant(), make_tenant()
    bob, carol, dave = colleague_of(admin_url, alice), colleague_of(admin_url, alice), colleague_of(admin_url, alice)
    ha, hb, hc, hd, hm = (auth_headers(t) for t in (alice, bob, carol, dave, mallory))

    project = await _ok(await http.post("/api/v1/projects", json={"name": "Offsite"}, headers=ha), 201)
    pid = project["id"]
    for person, role in ((bob, "viewer"), (carol, "editor")):
        body = {"email": f"{person.subject}@example.test", "role": role}
        members = await _ok(await http.post(f"/api/v1/projects/{pid}/members", json=body, headers=ha))
    bob_id = next(m["user_id"] for m in members if m["email"] == f"{bob.subject}@example.test")
    chat = await _ok(await http.post("/api/v1/chats", json={"title": "Agenda"}, headers=ha), 201)
    chat_id = chat["id"]
    await _ok(await http.patch(f"/api/v1/chats/{chat_id}", json={"project_id": pid}, headers=ha))

    # Carol, an editor, attaches in Alice's chat and sends it: her run sees the image, and so does Alice's next one.
    made = await _ok(await _attach(http, hc, chat_id), 201)
    await _upload(made["upload"])
    await _run(http, hc, chat_id, model, [made["id"]])
    await _run(http, ha, chat_id, model, [])
    assert seen == [[IMAGE], [IMAGE]]
    transcript = await _ok(await http.get(f"/api/v1/chats/{chat_id}/messages", headers=hb))
    assert [f["id"] for i in transcript["items"] for f in i.get("attachments") or []] == [made["id"]]

    # Every member reads and downloads it, Bob (a viewer) too; he cannot attach, nor remove Carol's file.
    for headers in (ha, hb, hc):
        got = await _ok(await http.get(f"/api/v1/attachments/{made['id']}", headers=headers))
        assert (got["chat_id"], got["filename"]) == (chat_id, "whiteboard.png")
        assert await _fetched(http, headers, made["id"]) == IMAGE
    assert _code(await _attach(http, hb, chat_id)) == (403, "project_read_only")
    assert _code(await http.delete(f"/api/v1/attachments/{made['id']}", headers=hb)) == (404, "attachment_not_found")
    assert _code(await http.delete(f"/api/v1/attachments/{made['id']}", headers=ha)) == (404, "attachment_not_found")

    # Outside the project, in the org or not: 404 for the file and for attaching alike.
    for headers in (hd, hm):
        for path in (f"/api/v1/attachments/{made['id']}", f"/api/v1/attachments/{made['id']}/download"):
            assert _code(await http.get(path, headers=headers)) == (404, "attachment_not_found")
        assert _code(await _attach(http, headers, chat_id)) == (404, "chat_not_found")

    # Removed from the project, Bob sees the file no more.
    await _ok(await http.delete(f"/api/v1/projects/{pid}/members/{bob_id}", headers=ha))
    for path in (f"/api/v1/attachments/{made['id']}", f"/api/v1/attachments/{made['id']}/download"):
        assert _code(await http.get(path, headers=hb)) == (404, "attachment_not_found")

    # Out of the project, the chat is Alice's alone again: Carol's file stays in it for Alice, Carol reads it no more.
    await _ok(await http.patch(f"/api/v1/chats/{chat_id}", json={"project_id": None}, headers=ha))
    assert await _fetched(http, ha, made["id"]) == IMAGE
    assert _code(await http.get(f"/api/v1/attachments/{made['id']}", headers=hc)) == (404, "attachment_not_found")
    assert _code(await _attach(http, hc, chat_id)) == (404, "chat_not_found")
