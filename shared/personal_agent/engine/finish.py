"""Ending a run, once: its new messages into the chat, its terminal status (its approvals still pending expire),
the terminal AG-UI event and the owner's feed. Used by the engine when a run ends and for a run no engine is
advancing (cancel, a lost driver)."""

from __future__ import annotations

from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedSuccessOutcome,
)
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from personal_agent import observability
from personal_agent.approvals import store as approval_store
from personal_agent.chats import followup_store, message_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.db.retry import retrying
from personal_agent.engine import subagent_events
from personal_agent.engine.cancellation import clear_local_cancel
from personal_agent.engine.chat_title import name_new_chat
from personal_agent.engine.drive import StepOutcome, StepStatus
from personal_agent.engine.emitter import RunEmitter
from personal_agent.outbox import announce as outbox
from personal_agent.runs import store
from personal_agent.sandbox import sessions as sandbox_sessions
from personal_agent.spec.labels import run_labels
from personal_agent.spec.run_spec import RunSpec


def run_ids(spec: RunSpec) -> dict[str, str]:
    """The AG-UI thread and run ids of the run's lifecycle events."""
    return {"thread_id": str(spec.chat_id), "run_id": str(spec.run_id)}


async def _tell_outbox(spec: RunSpec, status: str) -> None:
    """A headless run's result goes to its workflow's outputs; a chat with messages queued behind the run starts the
    next (`lifecycle/followup_queue.py`). The queue is read with the chat locked, after the run's end committed: a
    message queued before is seen here, one queued after sees the run ended and starts at once."""
    await outbox.run_ended(spec, status)
    async with org_transaction(spec.org_id) as conn:
        queue = await followup_store.lock_queue(conn, spec.chat_id)
    if queue is not None and queue.queued:
        await outbox.followups_waiting(spec.org_id, spec.chat_id)


async def end_run(
    spec: RunSpec,
    emitter: RunEmitter,
    messages: list[ModelMessage],
    history_len: int,
    status: StepStatus,
    seq: int,
    ri: int,
    error: dict[str, Any] | None = None,
    *,
    once: bool = False,
) -> StepOutcome:
    """Write the run's messages to the chat once, then emit its terminal event and tell the feed. `once`: only if
    this call ended it (two paths that may both end a run, such as a Stop racing a run's pause, tell the stream
    once); otherwise a repeated end (a retried durable Task) tells it again, in case the first did not get to."""
    new = ModelMessagesTypeAdapter.dump_python(messages[history_len:], mode="json")

    cost: list[float] = []  # a sub-agent's: what its tree cost, for its card on the parent's stream

    async def finish() -> bool:  # once: a replay after a lost COMMIT finds the run ended and writes nothing
        async with org_transaction(spec.org_id) as conn:
            if spec.parent_run_id is not None:
                cost[:] = [float(await store.tree_cost(conn, spec.run_id))]
            # A sub-agent's messages stay in its checkpoints (its answer reaches the chat through its parent).
            finished = await store.finish_run(conn, spec.run_id, status, error)
            if finished:  # what the run still waited on can no longer be decided
                await approval_store.expire_for_ended_run(conn, spec.org_id, spec.run_id, status)
            if finished and spec.parent_run_id is None:
                tip = await message_store.run_tip(conn, spec.run_id)  # its user turn (none for a regenerate)
                parent = tip if tip is not None else spec.parent_message_id
                await message_store.append_messages(conn, spec.org_id, spec.chat_id, spec.run_id, new, parent)
                await chat_store.raise_labels(conn, spec.chat_id, run_labels(spec, messages))  # what entered stays
            return finished

    if not await retrying(finish, what="the run's end") and once:
        return StepOutcome(status, seq, ri)  # another path ended it, and tells the stream
    await name_new_chat(spec, status, messages)  # before the terminal event: the web chat reloads on it
    clear_local_cancel(spec.run_id)
    await sandbox_sessions.end_run(spec)  # its kernel and sandbox files end with it
    if status == "failed" and error:
        observability.record_run_failed(error["code"])
    elif status == "succeeded":
        observability.record_run_finished()
    await emitter.emit(*_terminal_events(spec, status, error))
    if spec.parent_run_id is not None:
        answer = answer_text(new) if status == "succeeded" else None
        await subagent_events.finished(spec, status, error, answer, cost[0] if cost else None)
        return StepOutcome(status, seq, ri)
    await emitter.announce(
        "run_finished",
        {
            "run_id": str(spec.run_id),
            "chat_id": str(spec.chat_id),
            "status": status,
            "source": spec.trigger_source,
            "mode": spec.mode,
        },
    )
    await _tell_outbox(spec, status)
    return StepOutcome(status, seq, ri)


def answer_text(messages: list[Any]) -> str:
    """The final answer in stored messages (pydantic-ai JSON): the text of the last response."""
    for message in reversed(messages):
        if message.get("kind") == "response":
            return "".join(p.get("content", "") for p in message.get("parts", []) if p.get("part_kind") == "text")
    return ""


def _terminal_events(spec: RunSpec, status: StepStatus, error: dict[str, Any] | None) -> list[BaseEvent]:
    if status == "failed" and error:
        return [RunErrorEvent(message=error["message"], code=error["code"])]
    if status == "cancelled":
        return [
            CustomEvent(name="run_cancelled", value={"run_id": str(spec.run_id)}),
            RunFinishedEvent(**run_ids(spec), outcome=RunFinishedCancelledOutcome()),
        ]
    return [RunFinishedEvent(**run_ids(spec), outcome=RunFinishedSuccessOutcome())]
