"""Starting a workflow's run for a claimed delivery, through the one launch chokepoint (`launch_run`).

Triggered runs are durable (`auto` mode makes webhook and schedule runs durable), run as the workflow's
owner in the workflow's chat, and carry its approval policy; they recall the owner's memories only when the
workflow opts in (`recall_memories`). Over budget, no run starts: a `skipped` run
is recorded instead, so the workflow's history and the owner's feed show what happened.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal
from uuid import UUID

from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import InvalidInput
from personal_agent.governance.budgets import BudgetExceeded
from personal_agent.lifecycle.followup_queue import FollowUpQueued
from personal_agent.lifecycle.launch import DEFAULT_INSTRUCTIONS, LaunchRequest, launch_run, store_prepared
from personal_agent.lifecycle.launch_snapshot import choose_mode, snapshot_tools
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec
from personal_agent.workflows import delivery_store, schedule_store
from personal_agent.workflows import store as workflow_store
from personal_agent.workflows.delivery_store import Delivery
from personal_agent.workflows.prompts import TriggerValues, render
from personal_agent.workflows.store import Workflow, get_row

log = logging.getLogger("personal_agent.workflows")
Source = Literal["webhook", "schedule"]


@dataclass(frozen=True)
class Accepted:
    run_id: UUID
    status: str  # started | queued | skipped
    duplicate: bool = False


def time_key(moment: datetime) -> str:
    """A fire time as EventBridge Scheduler writes `<aws.scheduler.scheduled-time>` (the dedupe key)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _chat_for(workflow: Workflow) -> UUID:
    """The workflow's chat; a new one for its owner when the old one was deleted."""
    if workflow.chat_id is not None:
        return workflow.chat_id
    async with org_transaction(workflow.org_id) as conn:
        cur = await conn.execute("SELECT chat_id FROM workflows WHERE id = %s FOR UPDATE", [workflow.id])
        row = await cur.fetchone()
        if row is not None and row["chat_id"] is not None:
            return UUID(str(row["chat_id"]))
        chat = await chat_store.insert_chat(
            conn, workflow.org_id, workflow.owner_id, f"Workflow: {workflow.name}"[:200]
        )
        await workflow_store.set_chat(conn, workflow.id, chat.id)
    return chat.id


async def record_skipped(request: LaunchRequest, reason: BudgetExceeded) -> UUID:
    """A run that was not started (over budget): stored as `skipped` with the same spec shape, announced."""
    tools = snapshot_tools(request.tools)
    spec = RunSpec(
        run_id=uuid.uuid4(),
        org_id=request.org_id,
        user_id=request.user_id,
        chat_id=request.chat_id,
        model=request.model or get_settings().default_model,
        instructions=request.instructions or DEFAULT_INSTRUCTIONS,
        tools=tools,
        mode=choose_mode(request.mode, tools, request.trigger_source),
        trigger_source=request.trigger_source,
        approval_timeout_seconds=request.approval_timeout_seconds or get_settings().approval_timeout_seconds,
        approval_policy=request.approval_policy,
        recall_memories=request.recall_memories,
    )
    error = {"code": reason.code, "message": reason.message, **reason.details}
    async with org_transaction(request.org_id) as conn:
        await store_prepared(conn, spec, status="skipped", error=error)
    from personal_agent.engine.emitter import RunEmitter

    value = {"run_id": str(spec.run_id), "chat_id": str(spec.chat_id), "status": "skipped", "reason": reason.code}
    await RunEmitter(spec).announce("run_skipped", {**value, "source": spec.trigger_source})
    return spec.run_id


async def start_delivery(
    workflow: Workflow, delivery: Delivery, values: TriggerValues, *, keep_failures: bool
) -> Accepted:
    """Launch the run of a delivery this caller claimed. A failure releases the claim (a webhook retry may
    try again) or, with `keep_failures` (schedule fires, never retried), records it."""
    source: Source = "webhook" if values.trigger == "webhook" else "schedule"
    try:
        request = LaunchRequest(
            org_id=workflow.org_id,
            user_id=workflow.owner_id,
            chat_id=await _chat_for(workflow),
            message=render(workflow.prompt_template, values),
            model=workflow.model,
            trigger_source=source,
            tools=workflow.tools,
            instructions=workflow.instructions,
            approval_timeout_seconds=workflow.approval_timeout_seconds,
            approval_policy=workflow.approval_policy,
            history="none",  # every triggered run starts from its own prompt: the shared chat keeps growing
            recall_memories=workflow.recall_memories,  # the owner's memories only where the owner opted in
            agent=workflow.agent,  # its own instructions, model and tools (when set) override the agent's
        )
        try:
            run_id, status = (await launch_run(request)).run_id, "started"
        except BudgetExceeded as exc:
            run_id, status = await record_skipped(request, exc), "skipped"
        except FollowUpQueued as queued:  # the workflow's chat is busy: this run starts when its run ends
            run_id, status = UUID(str(queued.details["run_id"])), "queued"
    except BaseException as exc:
        if keep_failures and isinstance(exc, Exception):
            log.warning("a workflow run did not start", extra={"workflow_id": str(workflow.id)}, exc_info=True)
            detail = {"code": getattr(exc, "code", "internal_error"), "message": str(exc)[:500]}
            await delivery_store.fail(workflow.org_id, delivery.id, detail)
        else:
            await delivery_store.release(workflow.org_id, delivery.id)
        raise
    done: Literal["started", "skipped"] = "skipped" if status == "skipped" else "started"
    await delivery_store.complete(workflow.org_id, delivery.id, run_id, done, queued=status == "queued")
    return Accepted(run_id, status)


async def claim_fire(
    conn: Conn, org_id: UUID, workflow_id: UUID, scheduled: datetime
) -> tuple[Workflow, Delivery] | None:
    """Claim one fire time of a schedule inside the caller's transaction; None when the workflow is gone."""
    workflow = await get_row(conn, workflow_id)
    if workflow is None:
        return None
    delivery = await delivery_store.claim_in(conn, org_id, workflow_id, "schedule", time_key(scheduled))
    if delivery.won:
        await schedule_store.mark_fired(conn, workflow_id, scheduled)
    return workflow, delivery


def schedule_values(workflow: Workflow, scheduled: datetime) -> TriggerValues:
    key = time_key(scheduled)
    return TriggerValues(trigger="schedule", time=key, scheduled_time=key, workflow_name=workflow.name)


async def fire_schedule(org_id: UUID, workflow_id: UUID, scheduled: datetime) -> Accepted | None:
    """An EventBridge Scheduler delivery (at least once): start the run once per scheduled time."""
    async with org_transaction(org_id) as conn:
        claimed = await claim_fire(conn, org_id, workflow_id, scheduled)
    if claimed is None:
        log.warning("a schedule fired for a workflow that no longer exists", extra={"workflow_id": str(workflow_id)})
        return None
    workflow, delivery = claimed
    if not delivery.won:
        return Accepted(delivery.run_id, delivery.status, duplicate=True) if delivery.run_id else None
    return await start_delivery(workflow, delivery, schedule_values(workflow, scheduled), keep_failures=True)


async def fire_scheduled_event(event: dict[str, Any]) -> dict[str, Any]:
    """The triggers function's Scheduler event (`schedules.target_input`): start the run, once per fire time."""
    try:
        org_id, workflow_id = UUID(str(event["org_id"])), UUID(str(event["workflow_id"]))
        scheduled = datetime.fromisoformat(str(event["scheduled_time"]).replace("Z", "+00:00"))
    except (KeyError, ValueError) as exc:
        raise InvalidInput("a schedule event needs org_id, workflow_id and scheduled_time", code="bad_event") from exc
    if scheduled.tzinfo is None:
        scheduled = scheduled.replace(tzinfo=UTC)
    accepted = await fire_schedule(org_id, workflow_id, scheduled)
    if accepted is None:
        return {"workflow_id": str(workflow_id), "status": "ignored"}
    return {
        "workflow_id": str(workflow_id),
        "run_id": str(accepted.run_id),
        "status": accepted.status,
        "duplicate": accepted.duplicate,
    }
