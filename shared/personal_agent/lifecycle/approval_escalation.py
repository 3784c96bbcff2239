"""Escalation: an approval nobody decided by its `escalate_at` (the launch's `PA_APPROVAL_ESCALATION_SECONDS`) goes
to the org's admins too. The run's wait does not change (the same durable wait, the same task token, the same
timeout); the approval is marked escalated (audited once) and each active org admin's feed is told, so their
approvals inbox shows it. An org admin could always decide any approval of the org; escalation is who is told.

The admins' browsers hear of it too: a `push_escalation` pointer on the outputs queue (the deliver function sends
the web push, `push/notify.deliver_escalation`).

Where it runs: `pa dev` sweeps every 30 seconds (`EscalationLoop`). On AWS nothing polls: each approval that can
escalate has a one-time EventBridge schedule at its time (`approvals/escalation_schedule.py`) that invokes the run
recovery function, which runs `escalate_due` (see docs/tool-policies.md)."""

from __future__ import annotations

import logging
from uuid import UUID

from personal_agent.approvals import review_store
from personal_agent.approvals.escalation_schedule import ESCALATION_SOURCE
from personal_agent.bus import feed
from personal_agent.db import org_transaction, system_transaction
from personal_agent.identity.members import list_members
from personal_agent.outbox import queue
from personal_agent.periodic import Periodic
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.lifecycle.approval_escalation")
__all__ = ["ESCALATION_SOURCE", "EscalationLoop", "escalate_due"]
ADMIN_ROLES = frozenset({"admin", "org-admin"})
SWEEP_SECONDS = 30.0


async def _admins(org_id: UUID) -> list[UUID]:
    return [
        m["user_id"]
        for m in await list_members(org_id)
        if m.get("status") == "active" and ADMIN_ROLES & set(m.get("roles") or [])
    ]


async def escalate_due(limit: int = 100) -> list[UUID]:
    """Escalate every approval past its time (each once); the approvals escalated."""
    async with system_transaction() as conn:
        due = await review_store.due_escalations(conn, limit)
    done: list[UUID] = []
    for item in due:
        async with org_transaction(item.org_id) as conn:
            escalated = await review_store.mark_escalated(conn, item.org_id, item.approval_id)
        if escalated is None:
            continue
        done.append(escalated.id)
        value = {"run_id": str(escalated.run_id), "chat_id": str(escalated.chat_id or ""), "count": 1}
        admins = [a for a in await _admins(item.org_id) if a != escalated.owner_id]
        for admin in admins:
            await feed.announce(item.org_id, admin, "approval_requested", value)
        await _push(item.org_id, escalated.run_id, escalated.id, admins)
    return done


async def _push(org_id: UUID, run_id: UUID, approval_id: UUID, admins: list[UUID]) -> None:
    """Queue the admins' web push (nothing without an outputs queue; a refusal only logs: the feed told them)."""
    if not admins or not get_settings().output_queue_url:
        return
    message = {
        "type": queue.PUSH_ESCALATION,
        "org_id": str(org_id),
        "run_id": str(run_id),
        "approval_id": str(approval_id),
        "user_ids": [str(a) for a in admins],
    }
    try:
        await queue.enqueue(message)
    except Exception:
        log.warning("an escalation push could not be queued", extra={"run_id": str(run_id)}, exc_info=True)


class EscalationLoop(Periodic):
    """`pa dev`: the escalation sweep on the dev server's event loop."""

    def __init__(self, interval: float = SWEEP_SECONDS) -> None:
        super().__init__("approval escalation", interval, escalate_due, log)
