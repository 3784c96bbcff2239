"""An A2A message as one of our runs: its text parts are the user's turn, launched through the one chokepoint
(`launch_run`, `trigger_source="a2a"`, the endpoint's agent) in the chat its context id names, or in a new chat
bound to the agent. Checked before anything is stored: a user message with text parts only, not addressed to an
existing task, not empty, not too long."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from uuid import UUID

from a2a.types import Message, Part, Role, Task, TaskState, TaskStatus
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError, UnsupportedOperationError

from personal_agent.a2a.tasks import Caller, own_run
from personal_agent.chats import service as chat_service
from personal_agent.errors import NotFound
from personal_agent.governance.tiers import classification_tier
from personal_agent.lifecycle.followup_queue import FollowUpQueued
from personal_agent.lifecycle.launch import LaunchRequest, launch_run, validate_message
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec
from personal_agent.stream.access import while_permitted
from personal_agent.stream.connection_limit import holding_slot
from personal_agent.stream.queued_runs import Queued
from personal_agent.stream.run_stream import launch_or_follow_queued


async def message_text(caller: Caller, message: Message) -> str:
    """The user's turn in `message`, or the A2A error saying why there is none."""
    if message.role != Role.ROLE_USER:
        raise InvalidParamsError("the message's role must be user", data={"code": "invalid_role"})
    if message.task_id:
        await own_run(caller, message.task_id)  # someone else's task: not found
        raise UnsupportedOperationError(
            "a task takes no further messages: send a new message with its contextId to continue the conversation"
        )
    if not message.parts:
        raise InvalidParamsError("the message has no parts", data={"code": "empty_message"})
    for part in message.parts:
        if part.WhichOneof("content") != "text":
            raise ContentTypeNotSupportedError("only text parts are accepted", data={"code": "unsupported_part"})
    return validate_message("\n".join(part.text for part in message.parts))


async def _chat(caller: Caller, context_id: str) -> UUID:
    """The chat a context id names (one of the caller's: checked again in the launch's transaction), or a new
    chat bound to the agent, at least as classified as the agent asks."""
    if context_id:
        try:
            return UUID(context_id)
        except ValueError:
            raise NotFound(f"no context {context_id!r}", code="chat_not_found") from None
    floor = caller.agent.config.classification
    classification = max("standard", floor, key=classification_tier)
    chat = await chat_service.create_chat(caller.principal, None, classification, caller.agent.id)
    return chat.id


async def _launch(caller: Caller, message: Message) -> RunSpec:
    """The launch; a chat made for it is deleted again when the launch is refused (nothing half written)."""
    text = await message_text(caller, message)
    principal = caller.principal
    chat_id = await _chat(caller, message.context_id)
    request = LaunchRequest(
        org_id=principal.org_id,
        user_id=principal.user_id,
        chat_id=chat_id,
        message=text,
        trigger_source="a2a",
        agent=caller.agent.slug,
        owned_chat=True,
    )
    try:
        return await launch_run(request)
    except BaseException:
        if not message.context_id:
            await chat_service.delete_chat(principal, chat_id)
        raise


async def start(caller: Caller, message: Message) -> RunSpec | Queued:
    """Launch the run and return at once (`message/send` with `returnImmediately`); in a context whose chat is
    busy the message is queued by the chat's `followup_policy` (its task `submitted` until it starts)."""
    try:
        return await _launch(caller, message)
    except FollowUpQueued as queued:
        return Queued.of(caller.principal.org_id, queued)


async def start_streaming(caller: Caller, message: Message) -> tuple[RunSpec | Queued, AsyncGenerator[str]]:
    """Launch the run holding one of the caller's stream slots (429 `too_many_streams` before anything is stored,
    as `POST /chats/{id}/runs/stream`), and its SSE frames from its first event (a message queued behind the
    context's busy run: from its run's first event, once it starts); the slot is released, and the caller's
    membership re-checked every heartbeat, while the frames are read."""
    spec, slot, frames = await launch_or_follow_queued(caller.principal, lambda: _launch(caller, message))
    checked = while_permitted(caller.principal, holding_slot(slot, frames), get_settings().sse_heartbeat_seconds)
    return spec, closing_frames(checked)


async def closing_frames(frames: AsyncIterator[str]) -> AsyncGenerator[str]:
    """`frames` as a generator that, once closed, closes them (so the slot is released when a client goes)."""
    try:
        async for frame in frames:
            yield frame
    finally:
        close = getattr(frames, "aclose", None)
        if close is not None:
            await close()


def submitted_task(spec: RunSpec | Queued, message: Message) -> Task:
    """The first event of a stream: the task as launched, with the user's message."""
    task_id, context_id = str(spec.run_id), str(spec.chat_id)
    user = Message(
        message_id=message.message_id or f"{task_id}-user",
        task_id=task_id,
        context_id=context_id,
        role=Role.ROLE_USER,
        parts=[Part(text=part.text) for part in message.parts],
    )
    status = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
    return Task(id=task_id, context_id=context_id, status=status, history=[user])
