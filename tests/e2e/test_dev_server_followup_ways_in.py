"""Follow-ups through every way in that addresses an existing chat (issue 33, item 2), on `pa dev` as a user runs it:
a chat is kept busy by a run waiting for an approval (the demo model's `send_demo_message`), a second message
arrives, and the chat's `followup_policy` decides — the same as for the web chat:

- `/v1/responses` with `previous_response_id` (the official `openai` SDK): a background response is queued (status
  `queued`, retrievable, streamable, cancellable) and answered once the busy one ends; a synchronous one is 409
  `run_in_progress` (it cannot hold its connection behind a run of unbounded length); `reject` refuses both.
- AG-UI: a run on a busy thread streams its events once it starts, with the client's thread and run ids.
- A2A: a message to a busy context is a `submitted` task (`tasks/get` too) that completes after the busy one; a
  streamed one streams its run once it starts.
- Telegram: a message in a thread whose chat waits says it is queued, and its answer goes to the thread."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import openai
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState

from tests.channel_fakes import FakeTelegram, running_fake_telegram, telegram_message
from tests.e2e.pa_dev import DevServer, running_pa_dev

ASKS = "send hello to team@example.com"  # the demo model calls `send_demo_message`: the run waits for a person
BOT_TOKEN, SECRET = "123456:TEST-token", "tg-secret-token-for-tests"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeTelegram]]:
    with running_fake_telegram() as telegram:
        env = {"PA_TELEGRAM_API_URL": telegram.base_url, "PA_PUBLIC_URL": "https://pa.example.com"}
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-followup-ways"), env_extra=env) as server:
            admin = server.auth_for("boss", "org-admin")
            body = {"bot_token": BOT_TOKEN, "secret_token": SECRET}
            put = httpx.put(f"{server.url}/api/v1/admin/channels/telegram", json=body, headers=admin, timeout=30)
            assert put.status_code == 200, put.text
            yield server, telegram


def _pending_approval(http: httpx.Client, auth: dict[str, str], run_id: str) -> str:
    """The run's pending approval, read from its AG-UI stream as it is announced (no polling)."""
    with http.stream("GET", f"/api/v1/runs/{run_id}/events", headers=auth) as events:
        for line in events.iter_lines():
            if line.startswith("data:"):
                event = json.loads(line[5:])
                if event.get("type") == "CUSTOM" and event.get("name") == "approval_requested":
                    return str(event["value"]["approval_id"])
    raise AssertionError("the run ended without asking for an approval")


def _deny(http: httpx.Client, auth: dict[str, str], approval_id: str) -> None:
    decided = http.post(f"/api/v1/approvals/{approval_id}", headers=auth, json={"decision": "deny"})
    assert decided.status_code == 200, decided.text


def _run_id(response_id: str) -> str:
    return str(uuid.UUID(hex=response_id.removeprefix("resp_")))


def _openai(server: DevServer, auth: dict[str, str]) -> openai.OpenAI:
    token = auth["Authorization"].removeprefix("Bearer ")
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=token, max_retries=0, timeout=120)


@pytest.mark.timeout(300)
def test_v1_a_background_response_behind_a_busy_one_is_queued_and_a_synchronous_one_409(
    world: tuple[DevServer, FakeTelegram],
) -> None:
    server, _ = world
    auth = server.auth_for("vera", "user")
    client = _openai(server, auth)
    with httpx.Client(base_url=server.url, timeout=60) as http:
        busy = client.responses.create(model="offline:demo", input=ASKS, background=True)
        approval = _pending_approval(http, auth, _run_id(busy.id))

        with pytest.raises(openai.ConflictError) as refused:  # synchronous: never queued
            client.responses.create(model="offline:demo", input="now please", previous_response_id=busy.id)
        assert refused.value.code == "run_in_progress"

        queued = client.responses.create(
            model="offline:demo", input="second please", previous_response_id=busy.id, background=True
        )
        assert (queued.status, queued.background) == ("queued", True) and queued.id != busy.id
        assert client.responses.retrieve(queued.id).status == "queued"
        dropped = client.responses.create(
            model="offline:demo", input="third please", previous_response_id=busy.id, background=True
        )
        assert client.responses.cancel(dropped.id).status == "cancelled"
        assert client.responses.retrieve(dropped.id).status == "cancelled"
        assert http.get(f"/api/v1/runs/{_run_id(queued.id)}", headers=auth).status_code == 404  # not started yet

        _deny(http, auth, approval)
        with client.responses.retrieve(queued.id, stream=True) as stream:  # waits for it to start, then its events
            events = [event.type for event in stream]
        assert events[0] == "response.created" and events[-1] == "response.completed", events
        answered = client.responses.retrieve(queued.id)
        assert answered.status == "completed" and "second please" in answered.output_text
        assert client.responses.retrieve(busy.id).status == "completed"
        assert client.responses.retrieve(dropped.id).status == "cancelled"  # it never ran
        assert http.get(f"/api/v1/runs/{_run_id(dropped.id)}", headers=auth).status_code == 404
        other = _openai(server, server.auth_for("mallory", "user", org="rival"))
        with pytest.raises(openai.NotFoundError):
            other.responses.retrieve(queued.id)

        # `reject`: a background response behind a busy one is refused too.
        waiting = client.responses.create(model="offline:demo", input=ASKS, background=True)
        approval = _pending_approval(http, auth, _run_id(waiting.id))
        chat_id = http.get(f"/api/v1/runs/{_run_id(waiting.id)}", headers=auth).json()["chat_id"]
        put = http.put(f"/api/v1/chats/{chat_id}/followup-policy", headers=auth, json={"policy": "reject"})
        assert put.status_code == 200, put.text
        with pytest.raises(openai.ConflictError) as rejected:
            client.responses.create(
                model="offline:demo", input="again", previous_response_id=waiting.id, background=True
            )
        assert rejected.value.code == "run_in_progress"
        _deny(http, auth, approval)


@pytest.mark.timeout(300)
def test_agui_a_run_on_a_busy_thread_streams_once_the_thread_is_free(world: tuple[DevServer, FakeTelegram]) -> None:
    server, _ = world
    auth = server.auth_for("ana", "user")
    thread = f"t-{uuid.uuid4().hex[:8]}"

    def body(run_id: str, text: str) -> dict[str, Any]:
        message = {"id": f"m-{run_id}", "role": "user", "content": text}
        return {"threadId": thread, "runId": run_id, "state": {}, "messages": [message], "tools": [], "context": []}

    with httpx.Client(base_url=server.url, timeout=120) as http:
        with http.stream("POST", "/api/v1/agui/default", json=body("r-1", ASKS), headers=auth) as first:
            assert first.status_code == 200
            approval = None
            for line in first.iter_lines():
                event = json.loads(line[5:]) if line.startswith("data:") else {}
                if event.get("name") == "approval_requested":
                    approval = str(event["value"]["approval_id"])
                    break
        assert approval is not None
        with http.stream("POST", "/api/v1/agui/default", json=body("r-2", "second please"), headers=auth) as second:
            assert second.status_code == 200
            _deny(http, auth, approval)  # the busy run goes on and ends: the queued one starts
            events = [json.loads(line[5:]) for line in second.iter_lines() if line.startswith("data:")]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED", kinds
    assert (events[0]["threadId"], events[0]["runId"]) == (thread, "r-2")
    text = "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert "second please" in text


def _a2a_message(text: str, context_id: str = "") -> SendMessageRequest:
    message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[Part(text=text)], context_id=context_id)
    return SendMessageRequest(message=message)


async def _a2a_client(http: httpx.AsyncClient, server: DevServer, *, streaming: bool, polling: bool = False) -> Client:
    card = await A2ACardResolver(http, f"{server.url}/api/v1/a2a/assistant").get_agent_card()
    card.supported_interfaces[0].url = f"{server.url}/api/v1/a2a/assistant"  # PA_PUBLIC_URL is Telegram's here
    return ClientFactory(ClientConfig(httpx_client=http, streaming=streaming, polling=polling)).create(card)


@pytest.mark.timeout(300)
def test_a2a_a_message_to_a_busy_context_is_submitted_then_completed(world: tuple[DevServer, FakeTelegram]) -> None:
    server, _ = world
    auth = server.auth_for("alan", "user")

    async def check() -> None:
        async with httpx.AsyncClient(headers=auth, timeout=120) as http:
            streamer = await _a2a_client(http, server, streaming=True)
            busy = [e async for e in streamer.send_message(_a2a_message(ASKS))]
            final = busy[-1].status_update.status
            assert final.state == TaskState.TASK_STATE_INPUT_REQUIRED, final
            context = busy[0].task.context_id
            approval = final.message.metadata["approvals"][0]["approvalId"]

            poller = await _a2a_client(http, server, streaming=False, polling=True)
            (sent,) = [e async for e in poller.send_message(_a2a_message("second please", context))]
            queued = sent.task
            assert queued.status.state == TaskState.TASK_STATE_SUBMITTED and queued.context_id == context
            got = await poller.get_task(GetTaskRequest(id=queued.id))
            assert got.status.state == TaskState.TASK_STATE_SUBMITTED

            third = streamer.send_message(_a2a_message("third please", context))
            first_event = await anext(third)
            assert first_event.task.status.state == TaskState.TASK_STATE_SUBMITTED
            decided = await http.post(f"{server.url}/api/v1/approvals/{approval}", json={"decision": "deny"})
            assert decided.status_code == 200, decided.text
            rest = [e async for e in third]
            assert rest[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED

            done = await poller.get_task(GetTaskRequest(id=queued.id))
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
            assert "second please" in "".join(p.text for a in done.artifacts for p in a.parts)
            runs = {r["id"]: r for r in (await http.get(f"{server.url}/api/v1/runs")).json()["items"]}
            third_run = runs[first_event.task.id]
            assert third_run["status"] == "succeeded" and third_run["chat_id"] == context
            assert runs[queued.id]["finished_at"] <= third_run["created_at"]  # in the order they arrived

    anyio.run(check)


def _telegram_texts(telegram: FakeTelegram, chat: int) -> list[str]:
    return [
        str(p.get("text"))
        for m, p in list(telegram.calls)
        if m in ("sendMessage", "editMessageText") and str(p.get("chat_id")) == str(chat)
    ]


@pytest.mark.timeout(300)
def test_telegram_a_message_in_a_busy_thread_is_queued_and_answered_in_the_thread(
    world: tuple[DevServer, FakeTelegram],
) -> None:
    server, telegram = world
    user = chat = 6001
    auth = server.auth

    def post(update: bytes) -> None:
        headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET}
        assert http.post("/api/v1/channels/telegram/e2e", content=update, headers=headers).status_code == 200

    with httpx.Client(base_url=server.url, timeout=60) as http:
        post(telegram_message(1, user, chat, "hello"))
        telegram.wait_for(lambda calls: any("Connect your account" in t for t in _telegram_texts(telegram, chat)))
        code = re.search(r"\b([A-Z2-9]{8})\b", _telegram_texts(telegram, chat)[0])
        assert code is not None
        linked = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=auth)
        assert linked.status_code == 201, linked.text

        post(telegram_message(2, user, chat, ASKS))
        telegram.wait_for(
            lambda calls: any(str(p.get("chat_id")) == str(chat) and p.get("reply_markup") for _, p in calls)
        )
        (pending,) = http.get("/api/v1/approvals", params={"status": "pending"}, headers=auth).json()["items"]
        post(telegram_message(3, user, chat, "second please"))
        telegram.wait_for(lambda calls: any("queued" in t.lower() for t in _telegram_texts(telegram, chat)))
        assert not any("second please" in t for t in _telegram_texts(telegram, chat))  # not answered yet

        _deny(http, auth, pending["id"])
        telegram.wait_for(lambda calls: any("second please" in t for t in _telegram_texts(telegram, chat)))
        runs = [r for r in http.get("/api/v1/runs", headers=auth).json()["items"] if r["trigger_source"] == "telegram"]
    assert sorted(r["status"] for r in runs) == ["succeeded", "succeeded"]
    assert len({r["chat_id"] for r in runs}) == 1  # the thread's one chat
