"""A2A on `pa dev` as a user runs it, driven by a2a-sdk's own client (issue 32, item 5): the built-in assistant's
card, `message/send` and `message/stream` answered by the offline demo model (which calls its `current_time` tool
for "what time is it?"), the streamed events in order and their text the same answer `tasks/get` gives, a second
message in the same context continuing the chat, a task waiting for an approval (`input-required`) cancelled
with `tasks/cancel`; another user's or org's task is not found, and no token is a 401."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, A2AClientError, ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError

from tests.e2e.pa_dev import DevServer, running_pa_dev

AGENT = "assistant"


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-a2a")) as server:
        yield server


def _message(text: str, context_id: str = "") -> SendMessageRequest:
    message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[Part(text=text)], context_id=context_id)
    return SendMessageRequest(message=message)


async def _card(http: httpx.AsyncClient, dev: DevServer) -> AgentCard:
    return await A2ACardResolver(http, f"{dev.url}/api/v1/a2a/{AGENT}").get_agent_card()


async def _client(http: httpx.AsyncClient, dev: DevServer, *, streaming: bool) -> Client:
    return ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(await _card(http, dev))


def _answer(events: list[StreamResponse]) -> str:
    """The `answer` artifact as a client builds it from the chunks (`append: false` starts it over)."""
    text = ""
    for event in events:
        if event.HasField("artifact_update"):
            update = event.artifact_update
            chunk = "".join(p.text for p in update.artifact.parts)
            text = text + chunk if update.append else chunk
    return text


def _task_id(event: StreamResponse) -> str:
    payload = getattr(event, str(event.WhichOneof("payload")))
    return str(payload.id if event.HasField("task") else payload.task_id)


def _step(event: StreamResponse) -> str:
    """What a stream event says: a tool's call or result, answer text (restarted), its last chunk, other text."""
    if event.HasField("status_update"):
        meta = event.status_update.status.message.metadata
        return f"{'result' if 'outcome' in meta else 'call'} {meta['tool']}"
    update = event.artifact_update
    if update.last_chunk:
        return "last chunk"
    return "text" if update.append else "answer"


def _artifact_text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts)


def test_the_card_advertises_the_json_rpc_endpoint_streaming_and_the_bearer_scheme(dev: DevServer) -> None:
    async def check() -> None:
        async with httpx.AsyncClient(headers=dev.auth, timeout=60) as http:
            card = await _card(http, dev)
        assert card.name and card.capabilities.streaming and not card.capabilities.push_notifications
        (interface,) = card.supported_interfaces
        assert (interface.url, interface.protocol_binding) == (f"{dev.url}/api/v1/a2a/{AGENT}", "JSONRPC")
        assert card.security_schemes["bearer"].http_auth_security_scheme.scheme.lower() == "bearer"
        assert [set(r.schemes) for r in card.security_requirements] == [{"bearer"}]
        assert card.skills[0].id == AGENT

    anyio.run(check)


def test_send_then_stream_in_the_same_context_and_get(dev: DevServer) -> None:
    async def check() -> None:
        async with httpx.AsyncClient(headers=dev.auth, timeout=120) as http:
            sender = await _client(http, dev, streaming=False)
            (sent,) = [e async for e in sender.send_message(_message("what time is it?"))]
            task = sent.task
            assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
            assert "The time is" in _artifact_text(task) and task.status.message.parts[0].text == _artifact_text(task)
            runs = (await http.get(f"{dev.url}/api/v1/runs/{task.id}")).json()
            assert (runs["trigger_source"], runs["chat_id"], runs["agent"]["slug"]) == ("a2a", task.context_id, AGENT)
            assert "current_time" in {t["name"] for t in runs["tools"]}

            streamer = await _client(http, dev, streaming=True)
            events = [e async for e in streamer.send_message(_message("what time is it now?", task.context_id))]
            kinds = [e.WhichOneof("payload") for e in events]
            assert kinds[0] == "task" and kinds[-1] == "status_update", kinds
            assert events[0].task.status.state == TaskState.TASK_STATE_SUBMITTED
            assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
            second = events[0].task
            assert {_task_id(e) for e in events} == {second.id}
            # In order: the tool call, its result, then the answer's text (started over after the call, what came
            # before it was not the answer), its last chunk, the final status.
            steps = [_step(e) for e in events[1:-1]]
            answer_starts = len(steps) - 1 - steps[::-1].index("answer")  # the last start: what it said before the call
            assert steps.index("call current_time") < steps.index("result current_time") < answer_starts
            assert steps[-1] == "last chunk" and "answer" not in steps[steps.index("last chunk") :]
            assert second.context_id == task.context_id and second.id != task.id

            got = await streamer.get_task(GetTaskRequest(id=second.id))
            assert got.status.state == TaskState.TASK_STATE_COMPLETED
            assert _answer(events) == _artifact_text(got) and "The time is" in _artifact_text(got)
            assert [m.role for m in got.history] == [Role.ROLE_USER, Role.ROLE_AGENT]
            transcript = (await http.get(f"{dev.url}/api/v1/chats/{task.context_id}/messages")).json()
            assert "what time is it?" in str(transcript) and "what time is it now?" in str(transcript)

    anyio.run(check)


def test_a_task_waiting_for_an_approval_is_input_required_until_cancelled(dev: DevServer) -> None:
    async def check() -> None:
        async with httpx.AsyncClient(headers=dev.auth, timeout=120) as http:
            client = await _client(http, dev, streaming=True)
            events = [e async for e in client.send_message(_message("send hello to team@example.com"))]
            final = events[-1].status_update.status
            assert final.state == TaskState.TASK_STATE_INPUT_REQUIRED, final
            (approval,) = final.message.metadata["approvals"]
            assert approval["tool"] == "send_demo_message"
            task_id = events[0].task.id
            assert (
                await client.get_task(GetTaskRequest(id=task_id))
            ).status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            pending = (await http.get(f"{dev.url}/api/v1/approvals")).json()["items"]
            assert approval["approvalId"] in {a["id"] for a in pending}

            cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
            assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
            assert (await http.get(f"{dev.url}/api/v1/runs/{task_id}")).json()["status"] == "cancelled"

    anyio.run(check)


def test_another_users_or_orgs_task_is_not_found_and_no_token_is_401(dev: DevServer) -> None:
    async def check() -> None:
        async with httpx.AsyncClient(headers=dev.auth, timeout=120) as http:
            owner = await _client(http, dev, streaming=False)
            (sent,) = [e async for e in owner.send_message(_message("hello"))]
        task_id = sent.task.id
        for headers in (dev.auth_for("bob"), dev.auth_for("mallory", org="rival")):
            async with httpx.AsyncClient(headers=headers, timeout=60) as http:
                other = await _client(http, dev, streaming=False)
                with pytest.raises(TaskNotFoundError):
                    await other.get_task(GetTaskRequest(id=task_id))
                with pytest.raises(TaskNotFoundError):
                    await other.cancel_task(CancelTaskRequest(id=task_id))
        async with httpx.AsyncClient(timeout=60) as anonymous:
            card = await anonymous.get(f"{dev.url}/api/v1/a2a/{AGENT}/.well-known/agent-card.json")
            assert (card.status_code, card.json()["code"]) == (401, "missing_token")
            rpc = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}}
            refused = await anonymous.post(f"{dev.url}/api/v1/a2a/{AGENT}", json=rpc)
            assert refused.status_code == 401
            with pytest.raises(A2AClientError, match="401"):
                async with httpx.AsyncClient(headers=dev.auth, timeout=60) as http:
                    card_ = await _card(http, dev)
                await (
                    ClientFactory(ClientConfig(httpx_client=anonymous))
                    .create(card_)
                    .get_task(GetTaskRequest(id=task_id))
                )

    anyio.run(check)
