"""A2A in-process (the dev app on a loopback port, real Postgres and Valkey): an agent of the caller's own with a
scripted model, driven by a2a-sdk's client and by raw JSON-RPC with the 0.3 method names. What the model said
before calling a tool is not the answer (the artifact starts over after the call); bad messages are JSON-RPC
errors with our stable code and store nothing; a context id (chat) or task of someone else is refused as missing."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, StreamResponse, TaskState

from tests.auth import auth_headers
from tests.scripted import scripted_model, text_then_tool


@pytest.fixture
async def scripted_agent(http: httpx.AsyncClient, make_tenant: Any) -> AsyncIterator[tuple[dict[str, str], str]]:
    """A tenant's `Authorization` and the slug of its private agent answering with `text_then_tool`."""
    headers = auth_headers(make_tenant())
    with scripted_model(text_then_tool(rounds=1)) as (model, _):
        slug = f"a2a-{uuid.uuid4().hex[:8]}"
        body = {
            "slug": slug,
            "name": "Clock",
            "instructions": "Tell the time.",
            "model": model,
            "tools": ["current_time"],
        }
        created = await http.post("/api/v1/agents", json=body, headers=headers)
        assert created.status_code == 201, created.text
        yield headers, slug


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params}


def _v03_message(text: str, **extra: Any) -> dict[str, Any]:
    message = {"role": "user", "messageId": uuid.uuid4().hex, "parts": [{"kind": "text", "text": text}], **extra}
    return {"message": message}


async def _runs(http: httpx.AsyncClient, headers: dict[str, str]) -> list[Any]:
    listed = await http.get("/api/v1/runs", headers=headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["items"])


async def test_text_before_a_tool_call_is_not_the_answer(
    http: httpx.AsyncClient, scripted_agent: tuple[dict[str, str], str]
) -> None:
    headers, slug = scripted_agent
    async with httpx.AsyncClient(headers=headers, timeout=60) as client_http:
        card = await A2ACardResolver(client_http, f"{http.base_url}/api/v1/a2a/{slug}").get_agent_card()
        assert card.skills[0].tags == ["current_time"] and card.name == "Clock"
        client = ClientFactory(ClientConfig(httpx_client=client_http)).create(card)
        message = Message(role=Role.ROLE_USER, message_id="m1", parts=[Part(text="what time is it?")])
        events: list[StreamResponse] = [e async for e in client.send_message(SendMessageRequest(message=message))]
        chunks = [
            (e.artifact_update.append, e.artifact_update.artifact.parts[0].text)
            for e in events
            if e.HasField("artifact_update")
        ]
        assert chunks == [(False, "Checking "), (True, "the time."), (False, "It is "), (True, "noon."), (True, "")]
        tools = [e.status_update.status.message.parts[0].text for e in events[1:-1] if e.HasField("status_update")]
        assert tools == ["Calling current_time", "current_time answered (done)"]
        task = await client.get_task(GetTaskRequest(id=events[0].task.id))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [a.parts[0].text for a in task.artifacts] == ["It is noon."]


async def test_the_0_3_method_names_and_bad_messages(
    http: httpx.AsyncClient, make_tenant: Any, scripted_agent: tuple[dict[str, str], str]
) -> None:
    headers, slug = scripted_agent
    url = f"/api/v1/a2a/{slug}"
    sent = (await http.post(url, json=_rpc("message/send", _v03_message("what time is it?")), headers=headers)).json()
    task = sent["result"]
    assert task["status"]["state"] == "completed", sent
    got = (await http.post(url, json=_rpc("tasks/get", {"id": task["id"]}), headers=headers)).json()["result"]
    assert got["artifacts"][0]["parts"][0]["text"] == "It is noon."
    streamed = _rpc("message/stream", _v03_message("and now?", contextId=task["contextId"]))
    async with http.stream("POST", url, json=streamed, headers=headers) as response:
        lines = [json.loads(line[5:]) async for line in response.aiter_lines() if line.startswith("data:")]
    results = [line["result"] for line in lines]
    assert [r["kind"] for r in results[:1]] == ["task"] and results[0]["contextId"] == task["contextId"]
    assert (results[-1]["kind"], results[-1]["status"]["state"], results[-1]["final"]) == (
        "status-update",
        "completed",
        True,
    )
    before = await _runs(http, headers)

    other = auth_headers(make_tenant())
    theirs = (await http.post("/api/v1/chats", json={"title": "theirs"}, headers=other)).json()["id"]
    file_part = {"kind": "file", "file": {"uri": "https://example.com/x.pdf", "mimeType": "application/pdf"}}
    cases = [
        (_v03_message("   "), -32602, "empty_message"),
        (_v03_message("x" * 32_001), -32602, "message_too_long"),
        (_v03_message("hi", contextId=theirs), -32602, "chat_not_found"),
        (_v03_message("hi", contextId="not-a-chat"), -32602, "chat_not_found"),
        ({"message": {**_v03_message("hi")["message"], "parts": [file_part]}}, -32005, "unsupported_part"),
        ({"message": {**_v03_message("hi")["message"], "role": "agent"}}, -32602, "invalid_role"),
    ]
    for params, code, stable in cases:
        answer = (await http.post(url, json=_rpc("message/send", params), headers=headers)).json()
        assert (answer["error"]["code"], answer["error"]["data"]["code"]) == (code, stable), answer
    assert await _runs(http, headers) == before  # nothing was started
    assert (await http.get(f"/api/v1/chats/{theirs}/messages", headers=other)).json()["items"] == []

    hidden = await http.post(url, json=_rpc("tasks/get", {"id": task["id"]}), headers=other)
    assert (hidden.status_code, hidden.json()["code"]) == (404, "agent_not_found")  # a private agent of another org
    for method in ("tasks/get", "tasks/cancel"):  # at their own assistant's endpoint: no such task either
        rpc = _rpc(method, {"id": task["id"]})
        answer = (await http.post("/api/v1/a2a/assistant", json=rpc, headers=other)).json()
        assert answer["error"]["code"] == -32001, answer
    answer = (await http.post(url, json=_rpc("tasks/get", {"id": str(uuid.uuid4())}), headers=headers)).json()
    assert answer["error"]["code"] == -32001  # TaskNotFoundError
    cancel = (await http.post(url, json=_rpc("tasks/cancel", {"id": task["id"]}), headers=headers)).json()
    assert cancel["error"]["code"] == -32002  # TaskNotCancelableError: it has ended
    unknown = (await http.post(url, json=_rpc("tasks/forget", {}), headers=headers)).json()
    assert unknown["error"]["code"] == -32601


async def test_a_refused_launch_leaves_no_chat_behind(http: httpx.AsyncClient, make_tenant: Any) -> None:
    """A new context's chat is made before the launch; when the launch refuses (here: the agent's model is not one
    the org has), the chat goes again and the JSON-RPC error carries the launch's code."""
    headers = auth_headers(make_tenant())
    body = {"slug": "broken", "name": "Broken", "instructions": "Answer.", "model": "nope:nope"}
    assert (await http.post("/api/v1/agents", json=body, headers=headers)).status_code == 201
    chats = (await http.get("/api/v1/chats", headers=headers)).json()["items"]
    answer = await http.post("/api/v1/a2a/broken", json=_rpc("message/send", _v03_message("hi")), headers=headers)
    assert answer.json()["error"]["data"]["code"] == "unknown_model", answer.json()
    assert (await http.get("/api/v1/chats", headers=headers)).json()["items"] == chats
    assert await _runs(http, headers) == []
