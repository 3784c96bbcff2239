"""The state machine's Task inputs, dispatched to step kinds. Inputs and outputs are small pointers
(run id, org id, status, counters): never message history, message text or keys."""

from __future__ import annotations

import os
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput, dependency_outage
from personal_agent.lifecycle import approval_decisions as approvals
from personal_agent.lifecycle import child_runs as subagents
from personal_agent.lifecycle import drivers, durable_trace
from personal_agent.runs import store
from personal_agent.runtime import run_sync
from personal_agent.sandbox import sessions as sandbox_sessions
from personal_agent.settings import get_settings


class RetryableStepError(Exception):
    """A transient failure (the network blinked); the state machine retries the Task with backoff."""


def _ids(event: dict[str, Any]) -> tuple[UUID, UUID]:
    try:
        return UUID(str(event["run_id"])), UUID(str(event["org_id"]))
    except (KeyError, ValueError) as exc:
        raise InvalidInput("a step needs run_id and org_id", code="invalid_step_input") from exc


async def _advance(run_id: UUID, org_id: UUID) -> dict[str, Any]:
    from personal_agent.engine.runner import advance  # pydantic-ai: a ping or an approval step does without it

    outcome = await advance(run_id, org_id, time_budget=get_settings().step_time_budget_seconds)
    await sandbox_sessions.close_run(run_id)  # the next step may run elsewhere: it restores the run's stored session
    status = outcome.status
    # A round of sub-agents is stored here (a retried Task stores what its dead attempt did not); the
    # WaitForChildren Task starts their executions.
    if status == "delegating" and not await subagents.store_children(org_id, run_id, outcome.children):
        status = "cancelled"
    await drivers.after_drive(org_id, run_id, resume_inline_parent=False)  # a child resumes its waiting parent
    return {"run_id": str(run_id), "org_id": str(org_id), "status": status, "seq": outcome.seq}


async def _await_approval(run_id: UUID, org_id: UUID, token: str) -> dict[str, Any]:
    await approvals.store_task_token(org_id, run_id, token)
    return {"run_id": str(run_id), "org_id": str(org_id), "status": "waiting"}


async def _await_children(run_id: UUID, org_id: UUID, token: str) -> dict[str, Any]:
    await subagents.await_children(org_id, run_id, token)
    return {"run_id": str(run_id), "org_id": str(org_id), "status": "waiting"}


async def _approval_timeout(run_id: UUID, org_id: UUID) -> dict[str, Any]:
    expired = await approvals.expire_pending(org_id, run_id)
    return {"run_id": str(run_id), "org_id": str(org_id), "status": "continue", "expired": expired}


async def _fail(run_id: UUID, org_id: UUID, error: Any) -> dict[str, Any]:
    from personal_agent.engine.runner import fail_run  # pydantic-ai: a ping or an approval step does without it

    name = str(error)[:80] if error else "StepFailed"
    await fail_run(run_id, org_id, "step_failed", f"the durable run failed ({name})")
    await drivers.after_drive(org_id, run_id, resume_inline_parent=False)
    return {"run_id": str(run_id), "org_id": str(org_id), "status": "failed"}


def _ended_as_cancelled(run_id: UUID, org_id: UUID) -> bool:
    """A step that failed after its run was stopped ends the run `cancelled` (with its terminal event) instead of
    failing: the Stop stopped the execution, so no retry and no failure step would ever end it."""
    from personal_agent.engine.runner import end_idle_run  # pydantic-ai: a ping or an approval step does without it

    async def end() -> bool:
        async with org_transaction(org_id) as conn:
            row = await store.get_run(conn, run_id)
        if row is None or not row.cancel_requested or row.status in store.TERMINAL:
            return False
        await end_idle_run(run_id, org_id, "cancelled", once=True)
        await drivers.after_drive(org_id, run_id, resume_inline_parent=False)
        return True

    try:
        return run_sync(end())
    except Exception:  # the database is away too: the step's own error says what happened
        return False


def handle_step(event: dict[str, Any]) -> dict[str, Any]:
    """Run one step kind named by `action`, as a span of the run's trace (`durable_trace`)."""
    with durable_trace.step_span(event):
        result = _handle(event)
    durable_trace.step_ended(event, result)
    return result


def _handle(event: dict[str, Any]) -> dict[str, Any]:
    """Run one step kind named by `action`. An outage of the bus or the database (after the step waited it out for
    `PA_DEPENDENCY_RETRY_SECONDS`) surfaces as `DependencyUnavailable`, which the state machine retries with a long
    backoff (the run stays `running` at its last checkpoint, never failed for it); other transient failures as
    RetryableStepError."""
    action = event.get("action")
    if action == "ping":
        return {"ok": True, "action": "ping", "execution": event.get("execution"), "pid": os.getpid()}
    run_id, org_id = _ids(event)
    try:
        if action == "advance":
            return run_sync(_advance(run_id, org_id))
        if action == "await_approval":
            return run_sync(_await_approval(run_id, org_id, str(event["task_token"])))
        if action == "await_children":
            return run_sync(_await_children(run_id, org_id, str(event["task_token"])))
        if action == "approval_timeout":
            return run_sync(_approval_timeout(run_id, org_id))
        if action == "fail":
            return run_sync(_fail(run_id, org_id, event.get("error")))
    except Exception as exc:
        if action == "advance" and _ended_as_cancelled(run_id, org_id):
            return {"run_id": str(run_id), "org_id": str(org_id), "status": "cancelled"}
        outage = dependency_outage(exc)
        if outage is exc:
            raise
        if outage is not None:
            raise outage from exc  # the Task's error name is `DependencyUnavailable`
        if isinstance(exc, ConnectionError | TimeoutError):
            raise RetryableStepError(f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        raise
    raise InvalidInput(f"unknown step action {action!r}", code="unknown_step")
