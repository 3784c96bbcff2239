"""Approvals for the API and the durable steps: list, decide, expire, and resuming the run on its driver once
no approval of its wait is pending. The engine stores and announces approvals itself (`engine/deferred.py`)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal
from uuid import UUID

from personal_agent.approvals import escalation_schedule, store
from personal_agent.db import org_transaction
from personal_agent.errors import Conflict, InvalidInput, NotFound
from personal_agent.identity import user_store
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import approval_quorum, drivers
from personal_agent.observability import record_approval_wait
from personal_agent.runs import store as run_store
from personal_agent.spec.run_spec import RunSpec

Decision = Literal["approve", "deny"]


async def list_approvals(principal: Principal, status: str | None) -> list[store.ApprovalRow]:
    """The caller's approvals (every approval of the org for org admins), newest first."""
    async with org_transaction(principal.org_id) as conn:
        return await store.list_rows(conn, None if principal.is_org_admin else principal.user_id, status)


async def approver_names(org_id: UUID, rows: list[store.ApprovalRow]) -> dict[UUID, str]:
    """What to call each person who approved one of `rows` so far (a quorum's approvers)."""
    people = list({user for row in rows for user in row.approvers})
    if not people:
        return {}
    async with org_transaction(org_id) as conn:
        return await user_store.display_names(conn, people)


async def decide(
    principal: Principal, approval_id: UUID, decision: Decision, reason: str | None, arguments: dict[str, Any] | None
) -> store.ApprovalRow:
    """Record a decision (owner of the chat or an org admin), audit it, and resume the run when none is pending."""
    row, state = await _lock_pending(principal, approval_id, decision, arguments)
    if state == "run_ended":
        raise _decided("expired", ended=True)
    if state == "expired":
        # Nothing else resolves an expired wait of an inline run: the run goes on as if denied.
        await resume_if_decided(principal.org_id, row.run_id, row.checkpoint_seq)
        raise _decided("expired")
    status = "approved" if decision == "approve" else "denied"
    async with org_transaction(principal.org_id) as conn:
        if decision == "approve" and await approval_quorum.needs_more(conn, principal, row, reason, arguments):
            # one of two approvals: it stays pending (with this approver), and the run keeps waiting
            return replace(row, approvers=[*row.approvers, principal.user_id])
        updated = await store.record_decision(conn, approval_id, status, reason, arguments, principal.user_id)
        if updated is None:  # another decision, the wait's timeout or the run's end won the race
            current = await store.lock(conn, approval_id)
            raise _decided(current.status if current else "decided")
        record_approval_wait((datetime.now(UTC) - row.created_at).total_seconds())
        detail = {"reason": reason, "edited": arguments is not None}
        await store.audit(conn, principal.org_id, approval_id, principal.user_id, status, detail)
    await asyncio.to_thread(escalation_schedule.delete_schedule, approval_id)  # decided: nobody to escalate to
    await resume_if_decided(principal.org_id, row.run_id, row.checkpoint_seq)
    return updated


async def _lock_pending(
    principal: Principal, approval_id: UUID, decision: Decision, arguments: dict[str, Any] | None
) -> tuple[store.LockedApproval, Literal["pending", "expired", "run_ended"]]:
    """The pending approval the caller may decide (404 otherwise, 409 when decided) and its state: still `pending`,
    or just marked expired here because its wait timed out (`expired`) or its run has ended (`run_ended`)."""
    async with org_transaction(principal.org_id) as conn:
        row = await store.lock(conn, approval_id)
        if row is None or row.kind != "approval" or (row.owner_id != principal.user_id and not principal.is_org_admin):
            raise NotFound("approval not found", code="approval_not_found")
        if row.status != "pending":
            raise _decided(row.status)
        run = await run_store.get_run(conn, row.run_id)
        if run is None or run.status in run_store.TERMINAL:  # a run that ended runs no tool: nothing to approve
            ended = run.status if run else "deleted"
            await store.expire_for_ended_run(conn, principal.org_id, row.run_id, ended)
            return row, "run_ended"
        if row.expires_at <= datetime.now(UTC):
            await store.expire(conn, principal.org_id, approval_id)
            return row, "expired"
        if arguments is not None and decision != "approve":
            raise InvalidInput("edited arguments only go with `approve`", code="arguments_without_approval")
    return row, "pending"


def _decided(status: str, *, ended: bool = False) -> Conflict:
    """Why an approval can no longer be decided: 409 `approval_expired` (its wait timed out or its run ended) or
    `approval_already_decided` (someone answered first)."""
    if status == "expired":
        why = "its run has ended" if ended else "it has expired"
        return Conflict(f"this approval can no longer be decided: {why}", code="approval_expired")
    return Conflict(f"this approval was already {status}", code="approval_already_decided")


async def expire_pending(org_id: UUID, run_id: UUID) -> int:
    """Resolve the run's pending approvals after the wait timed out: they count as denied (a question takes its
    default answer, or expires without one)."""
    async with org_transaction(org_id) as conn:
        await store.take_default_answers(conn, org_id, run_id)
        expired = await store.resolve_pending(conn, org_id, run_id, "expired", store.EXPIRED_REASON, {})
        await run_store.resume_waiting(conn, run_id)
    return expired


async def store_task_token(org_id: UUID, run_id: UUID, token: str) -> None:
    """Remember the durable Task waiting on the run; if every approval was already decided, resume right away. A
    run cancelled before its Task began to wait releases the Task at once (nothing would fail its token)."""
    async with org_transaction(org_id) as conn:
        run = await run_store.lock_run(conn, run_id)
        if run_store.cancelled_or_ended(run):
            seq, cancelled = None, True
        else:
            seq, cancelled = await store.attach_task_token(conn, run_id, token), False
    if cancelled:
        from personal_agent.lifecycle import executions  # boto3: only a durable step gets here

        await executions.release_cancelled_wait(token)
    elif seq is not None:
        await resume_if_decided(org_id, run_id, seq)


async def resume_if_decided(org_id: UUID, run_id: UUID, seq: int) -> bool:
    """When no approval of the wait at checkpoint `seq` is pending, continue the run on its driver (once)."""
    async with org_transaction(org_id) as conn:
        run = await run_store.lock_run(conn, run_id)
        pending, token = await store.wait_state(conn, run_id, seq)
        if run is None or pending or run.status != "waiting" or not drivers.can_resume(run.mode, token):
            return False
        if token:
            await store.clear_task_token(conn, run_id, seq)
        await run_store.resume_waiting(conn, run_id)
    await drivers.resume(RunSpec.model_validate(run.spec), token)
    return True
