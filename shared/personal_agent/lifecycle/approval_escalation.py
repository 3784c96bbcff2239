"""Escalation: an approval nobody decided by its `escalate_at` (the launch's `PA_APPROVAL_ESCALATION_SECONDS`) goes
to the org's admins too. The run's wait does not change (the same durable wait, the same task token, the same
timeout); the approval is marked escalated (audited once) and each active org admin's feed is told, so their
approvals inbox shows it. An org admin could always decide any approval of the org; escalation is who is told.

Where it runs: `pa dev` sweeps every 30 seconds (`EscalationLoop`). On AWS nothing sweeps
yet (see docs/tool-policies.md)."""

from __future__ import annotations

import logging
from uuid import UUID

from personal_agent.approvals import review_store
from personal_agent.bus import feed
from personal_agent.db import org_transaction, system_transaction
from personal_agent.identity.members import list_members
from personal_agent.periodic import Periodic

log = logging.getLogger("personal_agent.lifecycle.approval_escalation")
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
        for admin in await _admins(item.org_id):
            if admin != escalated.owner_id:
                await feed.announce(item.org_id, admin, "approval_requested", value)
    return done


class EscalationLoop(Periodic):
    """`pa dev`: the escalation sweep on the dev server's event loop."""

    def __init__(self, interval: float = SWEEP_SECONDS) -> None:
        super().__init__("approval escalation", interval, escalate_due, log)
