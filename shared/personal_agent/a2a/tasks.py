"""A2A tasks are our runs: a task's id is its run's id, its context id the run's chat. Reading one (`tasks/get`)
and cancelling one (`tasks/cancel`) go through the same ownership and cancel paths as `GET /api/v1/runs/{id}` and
`POST /api/v1/runs/{id}/cancel`; a task is only ever its caller's own A2A run of the agent at this endpoint (anyone
else's, another org's, a run started some other way: `TaskNotFoundError`, never data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from a2a.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

from personal_agent.agents.service import LaunchAgent
from personal_agent.chats import message_store
from personal_agent.db import org_transaction
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import followup_queue, run_views
from personal_agent.runs import store

ANSWER_ARTIFACT = "answer"
"""The one artifact of a task: the run's answer (the text of its last model response)."""

STATES: dict[str, TaskState] = {
    "queued": TaskState.TASK_STATE_SUBMITTED,
    "running": TaskState.TASK_STATE_WORKING,
    "waiting": TaskState.TASK_STATE_INPUT_REQUIRED,
    "succeeded": TaskState.TASK_STATE_COMPLETED,
    "failed": TaskState.TASK_STATE_FAILED,
    "cancelled": TaskState.TASK_STATE_CANCELED,
    "skipped": TaskState.TASK_STATE_REJECTED,
}
WAITING_TEXT = (
    "Waiting for a person to approve a tool call: decide it in the web chat or with POST /api/v1/approvals/{id}."
)


@dataclass(frozen=True)
class Caller:
    """Who calls the A2A endpoint, and the agent it is (resolved from the path, visible to the caller)."""

    principal: Principal
    agent: LaunchAgent


def agent_message(task_id: str, context_id: str, text: str, message_id: str, **metadata: Any) -> Message:
    message = Message(
        message_id=message_id,
        task_id=task_id,
        context_id=context_id,
        role=Role.ROLE_AGENT,
        parts=[Part(text=text)],
    )
    if metadata:
        message.metadata.update(metadata)
    return message


def answer_text(messages: list[Any]) -> str:
    """The answer in stored messages (pydantic-ai JSON): the text of the last model response."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("kind") == "response":
            return "".join(p.get("content", "") for p in message.get("parts", []) if p.get("part_kind") == "text")
    return ""


def _user_text(messages: list[Any]) -> str:
    for message in messages:
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            if part.get("part_kind") == "user-prompt":
                content = part.get("content")
                if isinstance(content, str):
                    return content
                return "".join(c for c in content or [] if isinstance(c, str))
    return ""


def _slug(row: store.RunRow) -> str | None:
    agent = (row.spec or {}).get("agent") or {}
    slug = agent.get("slug")
    return str(slug) if slug else None


async def own_run(caller: Caller, task_id: str) -> store.RunRow:
    """The caller's own A2A run of this agent named by `task_id`; anything else is not found."""
    try:
        run_id = UUID(task_id)
    except ValueError:
        raise TaskNotFoundError(f"no task {task_id!r}") from None
    async with org_transaction(caller.principal.org_id) as conn:  # another org's run: RLS hides it
        row = await store.get_run(conn, run_id)
    if (
        row is None
        or row.user_id != caller.principal.user_id
        or row.trigger_source != "a2a"
        or _slug(row) != caller.agent.slug
    ):
        raise TaskNotFoundError(f"no task {task_id!r}")
    return row


QUEUED_STATES = {
    "queued": TaskState.TASK_STATE_SUBMITTED,
    "cancelled": TaskState.TASK_STATE_CANCELED,
    "failed": TaskState.TASK_STATE_FAILED,
}


async def _own_queued(caller: Caller, task_id: str) -> followup_queue.QueuedMessage | None:
    """The caller's message to this agent queued behind its context's busy run to start as task `task_id`, until
    it started (`lifecycle/followup_queue.py`); None otherwise."""
    try:
        run_id = UUID(task_id)
    except ValueError:
        return None
    queued = await followup_queue.of_run(caller.principal, run_id, "a2a")
    if queued is None or queued.row.status == "started" or queued.request.get("agent") != caller.agent.slug:
        return None
    return queued


def queued_task(queued: followup_queue.QueuedMessage, history_length: int | None = None) -> Task:
    """A queued message as a task: `submitted` while it waits, `canceled` or `failed` when it never started."""
    row = queued.row
    task_id, context_id = str(row.run_id), str(row.chat_id)
    user = Message(
        message_id=f"{task_id}-user",
        task_id=task_id,
        context_id=context_id,
        role=Role.ROLE_USER,
        parts=[Part(text=row.message)],
    )
    status = TaskStatus(state=QUEUED_STATES.get(row.status, TaskState.TASK_STATE_SUBMITTED))
    status.timestamp.FromDatetime(row.decided_at or row.created_at)
    if row.status == "failed" and row.error:
        text = str(row.error.get("message", "the message could not start"))
        status.message.CopyFrom(
            agent_message(task_id, context_id, text, f"{task_id}-error", code=row.error.get("code"))
        )
    return Task(id=task_id, context_id=context_id, status=status, history=[] if history_length == 0 else [user])


def task_of(row: store.RunRow, messages: list[Any], history_length: int | None = None) -> Task:
    """The run as an A2A task: its state, the answer as the status message and the `answer` artifact, and its
    history (the user's message, then the answer; the last `history_length` of them when given)."""
    task_id, context_id = str(row.id), str(row.chat_id)
    answer = answer_text(messages)
    history = [
        Message(
            message_id=f"{task_id}-user",
            task_id=task_id,
            context_id=context_id,
            role=Role.ROLE_USER,
            parts=[Part(text=_user_text(messages))],
        )
    ]
    if answer:
        history.append(agent_message(task_id, context_id, answer, f"{task_id}-answer"))
    if history_length is not None:
        history = history[len(history) - history_length :] if history_length else []
    task = Task(id=task_id, context_id=context_id, status=status_of(row, answer), history=history)
    if answer:
        task.artifacts.append(Artifact(artifact_id=ANSWER_ARTIFACT, name=ANSWER_ARTIFACT, parts=[Part(text=answer)]))
    return task


def status_of(row: store.RunRow, answer: str) -> TaskStatus:
    """The task's status: its state and a message saying what the run said (its answer, its error, its wait)."""
    task_id, context_id = str(row.id), str(row.chat_id)
    status = TaskStatus(state=STATES.get(row.status, TaskState.TASK_STATE_WORKING))
    when = row.finished_at or row.started_at or row.created_at
    status.timestamp.FromDatetime(when)
    if row.status == "succeeded" and answer:
        status.message.CopyFrom(agent_message(task_id, context_id, answer, f"{task_id}-answer"))
    elif row.status == "failed" and row.error:
        error = row.error
        text = str(error.get("message", "the run failed"))
        status.message.CopyFrom(agent_message(task_id, context_id, text, f"{task_id}-error", code=error.get("code")))
    elif row.status == "waiting":
        status.message.CopyFrom(waiting_message(task_id, context_id, []))
    return status


def waiting_message(task_id: str, context_id: str, approvals: list[dict[str, Any]]) -> Message:
    """What an `input-required` task says: a person decides the approval (the run's own approval flow)."""
    pending = [{"approvalId": a.get("approval_id"), "tool": a.get("tool")} for a in approvals]
    if pending:
        return agent_message(task_id, context_id, WAITING_TEXT, f"{task_id}-waiting", approvals=pending)
    return agent_message(task_id, context_id, WAITING_TEXT, f"{task_id}-waiting")


async def load_task(caller: Caller, task_id: str, history_length: int | None = None) -> Task:
    try:
        row = await own_run(caller, task_id)
    except TaskNotFoundError:
        queued = await _own_queued(caller, task_id)
        if queued is None:
            raise
        return queued_task(queued, history_length)
    async with org_transaction(caller.principal.org_id) as conn:
        messages = await message_store.run_messages(conn, row.id)
    return task_of(row, messages, history_length)


async def cancel_task(caller: Caller, task_id: str) -> store.RunRow | None:
    """Cancel the run as `POST /api/v1/runs/{id}/cancel` does; an ended one cannot be (`TaskNotCancelableError`).
    A message still queued is cancelled before it starts (None: no run to follow)."""
    try:
        row = await own_run(caller, task_id)
    except TaskNotFoundError:
        queued = await _own_queued(caller, task_id)
        if queued is None:
            raise
        if queued.row.status != "queued":
            raise TaskNotCancelableError(f"the task has ended ({queued.row.status})") from None
        await followup_queue.cancel(caller.principal, queued.row.chat_id, queued.row.id)
        return None
    if row.status in store.TERMINAL:
        raise TaskNotCancelableError(f"the task has ended ({row.status})")
    await run_views.cancel(caller.principal, row.id)
    return row
