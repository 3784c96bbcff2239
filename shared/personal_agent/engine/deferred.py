"""Deferred tool calls: pausing a run until a person approves them, and the decisions as pydantic-ai's
`DeferredToolResults` when it goes on. The engine stores and announces the approvals here (through the
approvals store); deciding them is `personal_agent.lifecycle.approval_decisions`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from ag_ui.core import CustomEvent, Interrupt, RunFinishedEvent, RunFinishedInterruptOutcome
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from personal_agent.approvals import store as approval_store
from personal_agent.db import org_transaction
from personal_agent.engine import subagent_events, tool_review
from personal_agent.engine.emitter import RunEmitter
from personal_agent.outbox import announce as outbox
from personal_agent.runs import store
from personal_agent.spec.run_spec import RunSpec


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
        await store.mark_waiting(conn, spec.run_id)
    await _announce(spec, emitter, rows)
    ids = [str(row.id) for row in rows]
    await outbox.run_paused(spec, ids)  # its owner hears of it (a headless run's outputs, subscribed browsers)
    return ids


async def _announce(spec: RunSpec, emitter: RunEmitter, rows: list[approval_store.PendingApproval]) -> None:
    """One `approval_requested` event per approval, then RUN_FINISHED with their interrupts, and the feed."""
    interrupts = []
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
    await emitter.announce(
        "approval_requested", {"run_id": str(spec.run_id), "chat_id": str(spec.chat_id), "count": len(rows)}
    )


async def approval_results(spec: RunSpec, seq: int) -> DeferredToolResults | None:
    """The decisions for the approvals of checkpoint `seq`, or None while any is still pending."""
    async with org_transaction(spec.org_id) as conn:
        rows = await approval_store.decisions_for(conn, spec.run_id, seq)
        if not rows or any(r.status == "pending" for r in rows):
            return None
        await store.mark_running(conn, spec.run_id)
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
    for row in rows:
        if row.status == "approved":
            approvals[row.tool_call_id] = ToolApproved(override_args=row.edited_args) if row.edited_args else True
        else:
            why = row.reason or ("denied by a person" if row.status == "denied" else "the approval expired")
            approvals[row.tool_call_id] = ToolDenied(f"The tool call was not approved: {why}.")
    return DeferredToolResults(approvals=approvals)


async def deny_by_policy(org_id: UUID, run_id: UUID) -> int:
    """Deny the run's pending approvals because its workflow's policy is to deny, not to wait; the run goes on."""
    async with org_transaction(org_id) as conn:
        denied = await approval_store.resolve_pending(
            conn, org_id, run_id, "denied", "the workflow denies actions that need approval", {"policy": "deny"}
        )
        await store.resume_waiting(conn, run_id)
    return denied
