"""Deferred tool calls: pausing a run until a person approves them (or answers its `ask_user` questions), and the
decisions and answers as pydantic-ai's `DeferredToolResults` when it goes on. Approvals and questions are one wait:
the engine stores and announces both here (through the approvals store); deciding them is
`personal_agent.lifecycle.approval_decisions`, answering `personal_agent.lifecycle.question_answers`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from ag_ui.core import CustomEvent, Interrupt, RunFinishedEvent, RunFinishedInterruptOutcome
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ModelRetry, ToolApproved, ToolDenied, ToolReturn

from personal_agent.approvals import store as approval_store
from personal_agent.db import org_transaction
from personal_agent.engine import subagent_events, tool_review
from personal_agent.engine.emitter import RunEmitter
from personal_agent.outbox import announce as outbox
from personal_agent.runs import store
from personal_agent.spec.run_spec import RunSpec

ASK_USER = "ask_user"


def questions_of(requests: DeferredToolRequests) -> list[tuple[str, dict[str, Any]]]:
    """The `ask_user` calls among the deferred ones: (tool call id, the question's form)."""
    return [
        (call.tool_call_id, requests.metadata.get(call.tool_call_id, {}).get("question") or _args(call.args))
        for call in requests.calls
        if call.tool_name == ASK_USER
    ]


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except ValueError:
        return {"_raw": str(raw)}
    return parsed if isinstance(parsed, dict) else {"_value": parsed}


async def pause_for_approval(
    spec: RunSpec,
    emitter: RunEmitter,
    requests: DeferredToolRequests,
    seq: int,
    messages_json: bytes,
    state: dict[str, Any],
) -> list[str]:
    """Checkpoint the paused run and store one pending approval per deferred call (in one transaction,
    idempotent per round and tool call: a retried step finds its own rows), then announce each."""
    expires = datetime.now(UTC) + timedelta(seconds=spec.approval_timeout_seconds)
    async with org_transaction(spec.org_id) as conn:
        await store.save_checkpoint(conn, spec, seq, "awaiting_approval", messages_json, state)
        rows = [
            await approval_store.add_pending(
                conn, spec, seq, call.tool_call_id, call.tool_name, _args(call.args), expires
            )
            for call in requests.approvals
        ]
        await tool_review.store_requirements(conn, spec, requests.metadata, rows)  # quorum, escalation
        asked = [
            await approval_store.add_pending(conn, spec, seq, call_id, ASK_USER, form, expires, kind="question")
            for call_id, form in questions_of(requests)
        ]
        await store.mark_waiting(conn, spec.run_id)
    await _announce(spec, emitter, rows, asked)
    rows = rows + asked
    ids = [str(row.id) for row in rows]
    await outbox.run_paused(spec, ids)  # its owner hears of it (a headless run's outputs, subscribed browsers)
    return ids


async def _announce(
    spec: RunSpec,
    emitter: RunEmitter,
    rows: list[approval_store.PendingApproval],
    asked: list[approval_store.PendingApproval],
) -> None:
    """One `approval_requested` event per approval and `question_asked` per question, then RUN_FINISHED with their
    interrupts, and the feed."""
    interrupts = [await _ask(spec, emitter, row) for row in asked]
    for row in rows:
        value = {
            "approval_id": str(row.id),
            "run_id": str(spec.run_id),
            "tool": row.tool_name,
            "tool_call_id": row.tool_call_id,
            "args": row.args,
            "expires_at": row.expires_at.isoformat(),
        }
        await emitter.emit(CustomEvent(name="approval_requested", value=value))
        await subagent_events.approval_requested(spec, value)
        interrupts.append(
            Interrupt(
                id=str(row.id),
                reason="tool_approval",
                tool_call_id=row.tool_call_id,
                message=f"Approve {row.tool_name}?",
                expires_at=value["expires_at"],
            )
        )
    outcome = RunFinishedInterruptOutcome(interrupts=interrupts)
    await emitter.emit(RunFinishedEvent(thread_id=str(spec.chat_id), run_id=str(spec.run_id), outcome=outcome))
    if rows:
        await emitter.announce(
            "approval_requested", {"run_id": str(spec.run_id), "chat_id": str(spec.chat_id), "count": len(rows)}
        )
    for row in asked:
        feed = {"question_id": str(row.id), "run_id": str(spec.run_id), "chat_id": str(spec.chat_id)}
        await emitter.announce("question_asked", {**feed, "question": row.args["question"]})


async def _ask(spec: RunSpec, emitter: RunEmitter, row: approval_store.PendingApproval) -> Interrupt:
    """The `question_asked` event of one question, and its interrupt."""
    value = {
        "question_id": str(row.id),
        "run_id": str(spec.run_id),
        "tool_call_id": row.tool_call_id,
        **row.args,
        "expires_at": row.expires_at.isoformat(),
    }
    await emitter.emit(CustomEvent(name="question_asked", value=value))
    return Interrupt(
        id=str(row.id),
        reason="user_input",
        tool_call_id=row.tool_call_id,
        message=str(row.args["question"]),
        expires_at=value["expires_at"],
    )


async def approval_results(spec: RunSpec, seq: int, emitter: RunEmitter | None = None) -> DeferredToolResults | None:
    """The decisions for the approvals of checkpoint `seq` and the answers to its questions (each announced as
    `question_answered` on `emitter`), or None while any is still pending."""
    async with org_transaction(spec.org_id) as conn:
        rows = await approval_store.decisions_for(conn, spec.run_id, seq)
        if not rows or any(r.status == "pending" for r in rows):
            return None
        await store.mark_running(conn, spec.run_id)
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
    calls: dict[str, Any] = {}
    for row in rows:
        if row.kind == "question":
            calls[row.tool_call_id] = await _answered(spec, emitter, row)
        elif row.status == "approved":
            approvals[row.tool_call_id] = ToolApproved(override_args=row.edited_args) if row.edited_args else True
        else:
            why = row.reason or ("denied by a person" if row.status == "denied" else "the approval expired")
            approvals[row.tool_call_id] = ToolDenied(f"The tool call was not approved: {why}.")
    return DeferredToolResults(approvals=approvals, calls=calls)


async def _answered(
    spec: RunSpec, emitter: RunEmitter | None, row: approval_store.ApprovalDecision
) -> ToolReturn | ModelRetry:
    """A question's result for the model: its answer, or (expired without a default) a failed call."""
    if emitter is not None:
        value = {"question_id": str(row.id), "run_id": str(spec.run_id), "tool_call_id": row.tool_call_id}
        value |= {"status": row.status}
        await emitter.emit(CustomEvent(name="question_answered", value={**value, "answer": row.answer}))
    if row.status == "answered":
        return ToolReturn(return_value=row.answer)
    return ModelRetry(f"The user did not answer: {row.reason or 'the question expired'}. Go on without the answer.")


async def deny_by_policy(org_id: UUID, run_id: UUID) -> int:
    """Deny the run's pending approvals because its workflow's policy is to deny, not to wait; the run goes on."""
    async with org_transaction(org_id) as conn:
        denied = await approval_store.resolve_pending(
            conn, org_id, run_id, "denied", "the workflow denies actions that need approval", {"policy": "deny"}
        )
        await store.resume_waiting(conn, run_id)
    return denied
