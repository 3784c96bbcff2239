"""Attachments: an image dropped into a chat is uploaded to the documents bucket (moto S3) through its presigned
POST, named in `POST /chats/{id}/runs`, and reaches the model as binary content, from both drivers; the durable
run's Step Functions payloads carry a reference, never the bytes. A model without the `vision` tag is refused
before anything is stored; bad files are refused with clear codes."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
import uuid
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import boto3
import httpx
import psycopg
import pytest
from pydantic_ai.messages import BinaryContent, ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.knowledge import wait_for_status
from tests.sfn import wait_for_execution
from tests.sse import read_events


def png(width: int = 2, height: int = 2) -> bytes:
    """A real (tiny, grey) PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


IMAGE = png()


class Seen:
    """What a scripted model was sent: the binary parts of its user turns, per request."""

    def __init__(self) -> None:
        self.binaries: list[list[BinaryContent]] = []
        self.texts: list[str] = []


@pytest.fixture
def vision_model() -> Iterator[tuple[str, Seen]]:
    yield from _scripted(("vision",))


@pytest.fixture
def blind_model() -> Iterator[tuple[str, Seen]]:
    yield from _scripted(())


def _scripted(tags: tuple[str, ...]) -> Iterator[tuple[str, Seen]]:
    seen = Seen()
    model_id = f"test:{uuid.uuid4().hex[:8]}"

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        prompts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)]
        binaries = [c for p in prompts if not isinstance(p.content, str) for c in p.content]
        seen.binaries.append([c for c in binaries if isinstance(c, BinaryContent)])
        seen.texts.append(
            " ".join(
                c
                for p in prompts
                for c in ([p.content] if isinstance(p.content, str) else p.content)
                if isinstance(c, str)
            )
        )
        yield f"I see {len(seen.binaries[-1])} image(s)."

    register_model(model_id, lambda: FunctionModel(stream_function=stream, model_name="scripted"), tags=tags)
    try:
        yield model_id, seen
    finally:
        unregister_model(model_id)


async def new_chat(http: httpx.AsyncClient, headers: dict[str, str]) -> str:
    response = await http.post("/api/v1/chats", json={"title": "pictures"}, headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def attach(
    http: httpx.AsyncClient, headers: dict[str, str], chat_id: str, data: bytes = IMAGE, upload: bool = True
) -> dict[str, Any]:
    body = {"filename": "screen shot.png", "content_type": "image/png", "size": len(data)}
    created = await http.post(f"/api/v1/chats/{chat_id}/attachments", json=body, headers=headers)
    assert created.status_code == 201, created.text
    attachment = created.json()
    assert attachment["kind"] == "image" and attachment["run_id"] is None
    if upload:  # the browser's form POST, straight to the bucket
        form = attachment["upload"]
        async with httpx.AsyncClient() as s3:
            posted = await s3.post(form["url"], data=form["fields"], files={"file": ("x.png", data, "image/png")})
        assert posted.status_code in (200, 201, 204), posted.text
    return dict(attachment)


async def run_with(
    http: httpx.AsyncClient, headers: dict[str, str], chat_id: str, model: str, ids: list[str], mode: str = "inline"
) -> httpx.Response:
    body = {"message": "what is in this picture?", "model": model, "mode": mode, "attachments": ids}
    return await http.post(f"/api/v1/chats/{chat_id}/runs", json=body, headers=headers)


@pytest.mark.parametrize("mode", ["inline", "durable"])
async def test_an_image_reaches_the_model_as_binary_content(
    http: httpx.AsyncClient, make_tenant: Any, vision_model: tuple[str, Seen], admin_url: str, mode: str
) -> None:
    model, seen = vision_model
    headers = auth_headers(make_tenant())
    chat_id = await new_chat(http, headers)
    attachment = await attach(http, headers, chat_id)
    started = await run_with(http, headers, chat_id, model, [attachment["id"]], mode)
    assert started.status_code == 202, started.text
    frames = await read_events(http, started.json()["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    [binaries] = seen.binaries
    assert [(b.media_type, b.data) for b in binaries] == [("image/png", IMAGE)]
    assert "what is in this picture?" in seen.texts[0]

    # The transcript shows the message with its file; the attachment is now bound to the run.
    transcript = (await http.get(f"/api/v1/chats/{chat_id}/messages", headers=headers)).json()["items"]
    user = next(i for i in transcript if i["role"] == "user")
    assert user["text"] == "what is in this picture?"
    assert user["attachments"] == [
        {
            "id": attachment["id"],
            "name": "screen shot.png",
            "size": len(IMAGE),
            "content_type": "image/png",
            "kind": "image",
        }
    ]
    got = (await http.get(f"/api/v1/attachments/{attachment['id']}", headers=headers)).json()
    assert got["run_id"] == started.json()["run_id"]

    # Stored messages and checkpoints hold the reference, not the bytes.
    encoded = base64.b64encode(IMAGE).decode()
    with psycopg.connect(admin_url) as conn:
        stored = conn.execute(
            "SELECT string_agg(c.messages::text, '') FROM run_checkpoints c WHERE c.run_id = %s",
            [started.json()["run_id"]],
        ).fetchone()
    assert stored and stored[0] and f"attachment://{attachment['id']}" in stored[0] and encoded not in stored[0]
    if mode == "durable":
        with psycopg.connect(admin_url) as conn:
            row = conn.execute("SELECT execution_arn FROM runs WHERE id = %s", [started.json()["run_id"]]).fetchone()
        assert row and row[0]
        sfn = boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
        assert wait_for_execution(sfn, row[0])["status"] == "SUCCEEDED"
        events = sfn.get_execution_history(executionArn=row[0], maxResults=1000)["events"]
        payloads = json.dumps([e[k] for e in events for k in e if k.endswith("EventDetails")])
        assert encoded not in payloads and encoded[:40] not in payloads and "attachment://" not in payloads


async def test_a_model_that_cannot_see_is_refused_and_nothing_is_stored(
    http: httpx.AsyncClient, make_tenant: Any, blind_model: tuple[str, Seen], vision_model: tuple[str, Seen]
) -> None:
    blind, seen = blind_model
    headers = auth_headers(make_tenant())
    chat_id = await new_chat(http, headers)
    attachment = await attach(http, headers, chat_id)
    refused = await run_with(http, headers, chat_id, blind, [attachment["id"]])
    assert (refused.status_code, refused.json()["code"]) == (422, "model_lacks_vision")
    assert "cannot read images" in refused.json()["message"]
    assert seen.binaries == []
    assert (await http.get(f"/api/v1/chats/{chat_id}/messages", headers=headers)).json()["items"] == []
    assert (await http.get(f"/api/v1/attachments/{attachment['id']}", headers=headers)).json()["run_id"] is None
    # The same message goes through on a vision model; without the image, the blind model is fine.
    assert (await run_with(http, headers, chat_id, vision_model[0], [attachment["id"]])).status_code == 202
    assert (await run_with(http, headers, await new_chat(http, headers), blind, [])).status_code == 202


async def test_bad_attachments_are_refused_with_clear_codes(
    http: httpx.AsyncClient, make_tenant: Any, vision_model: tuple[str, Seen]
) -> None:
    model, seen = vision_model
    alice, bob = make_tenant(), make_tenant()
    headers = auth_headers(alice)
    chat_id = await new_chat(http, headers)
    url = f"/api/v1/chats/{chat_id}/attachments"
    for body, status, code in [
        (
            {"filename": "run.exe", "content_type": "application/x-msdownload", "size": 10},
            415,
            "unsupported_attachment",
        ),
        ({"filename": "big.png", "content_type": "image/png", "size": 11 * 1024 * 1024}, 413, "attachment_too_large"),
        ({"filename": "empty.png", "content_type": "image/png", "size": 0}, 422, "empty_attachment"),
    ]:
        response = await http.post(url, json=body, headers=headers)
        assert (response.status_code, response.json()["code"]) == (status, code), response.text
    other_chat = await http.post(
        f"/api/v1/chats/{await new_chat(http, auth_headers(bob))}/attachments",
        json={"filename": "a.png", "content_type": "image/png", "size": 5},
        headers=headers,
    )
    assert (other_chat.status_code, other_chat.json()["code"]) == (404, "chat_not_found")

    pending = await attach(http, headers, chat_id, upload=False)
    not_uploaded = await run_with(http, headers, chat_id, model, [pending["id"]])
    assert (not_uploaded.status_code, not_uploaded.json()["code"]) == (409, "attachment_not_uploaded")
    foreign = await run_with(http, headers, chat_id, model, [str(uuid.uuid4())])
    assert (foreign.status_code, foreign.json()["code"]) == (404, "attachment_not_found")

    sent = await attach(http, headers, chat_id)
    first = await run_with(http, headers, chat_id, model, [sent["id"]])
    assert first.status_code == 202
    await read_events(http, first.json()["events_url"], headers)  # one run at a time on a chat
    again = await run_with(http, headers, chat_id, model, [sent["id"]])
    assert (again.status_code, again.json()["code"]) == (409, "attachment_sent")
    removed = await http.delete(f"/api/v1/attachments/{sent['id']}", headers=headers)
    assert (removed.status_code, removed.json()["code"]) == (409, "attachment_sent")

    # Bob can neither use, read nor remove Alice's file; Alice removes her unsent one.
    bob_headers = auth_headers(bob)
    bob_chat = await new_chat(http, bob_headers)
    stolen = await run_with(http, bob_headers, bob_chat, model, [pending["id"]])
    assert (stolen.status_code, stolen.json()["code"]) == (404, "attachment_not_found")
    for method in ("GET", "DELETE"):
        response = await http.request(method, f"/api/v1/attachments/{pending['id']}", headers=bob_headers)
        assert (response.status_code, response.json()["code"]) == (404, "attachment_not_found")
    assert (await http.delete(f"/api/v1/attachments/{pending['id']}", headers=headers)).status_code == 204
    assert (await http.get(f"/api/v1/attachments/{pending['id']}", headers=headers)).status_code == 404


async def test_a_document_attached_in_a_chat_is_searchable_in_that_chat(
    http: httpx.AsyncClient, make_tenant: Any, vision_model: tuple[str, Seen]
) -> None:
    model, seen = vision_model
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat_id = await new_chat(http, headers)
    text = b"# Travel policy\n\nTrain journeys under four hours are booked in second class, never by plane.\n"
    body = {"filename": "policy.md", "content_type": "text/markdown", "size": len(text)}
    created = await http.post(f"/api/v1/chats/{chat_id}/attachments", json=body, headers=headers)
    assert created.status_code == 201, created.text
    attachment = created.json()
    assert attachment["kind"] == "document" and attachment["document_id"]
    form = attachment["upload"]
    async with httpx.AsyncClient() as s3:
        posted = await s3.post(form["url"], data=form["fields"], files={"file": ("policy.md", text, "text/markdown")})
    assert posted.status_code in (200, 201, 204), posted.text
    # The uploader's feed announces the document's status (XREAD blocks on it); then the API shows it.
    await asyncio.to_thread(wait_for_status, tenant.org_id, tenant.user_id, attachment["document_id"])
    document = (await http.get(f"/api/v1/knowledge/documents/{attachment['document_id']}", headers=headers)).json()
    assert (document["status"], document["collection"]) == ("ready", f"chat:{chat_id}"), document

    found = await http.get(
        "/api/v1/knowledge/search", params={"q": "second class train", "collection": f"chat:{chat_id}"}, headers=headers
    )
    assert found.status_code == 200, found.text
    assert any("second class" in p["text"] for p in found.json()["items"])
    # Not among the org's or the user's own documents: only that chat's.
    assert not any(
        "second class" in p["text"]
        for p in (
            await http.get("/api/v1/knowledge/search", params={"q": "second class train"}, headers=headers)
        ).json()["items"]
    )

    started = await run_with(http, headers, chat_id, model, [attachment["id"]])
    assert started.status_code == 202, started.text
    await read_events(http, started.json()["events_url"], headers)
    assert seen.binaries == [[]]  # a document is not sent as bytes: the model is told where to find it
    assert "attached the document 'policy.md'" in seen.texts[0] and "search_knowledge" in seen.texts[0]
