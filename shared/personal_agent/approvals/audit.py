"""The approval audit trail for org admins: who asked, approved, denied or let expire which tool call, and why,
newest first, paged by the audit row id, with the members' names and links to the chat and the run."""

from __future__ import annotations

import dataclasses
from typing import Any
from uuid import UUID

from personal_agent.approvals import store
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.identity.members import list_members
from personal_agent.identity.principal import Principal

POLICY_REASON = "the workflow's policy denies actions that need approval"


def _reason(action: str, detail: dict[str, Any]) -> str | None:
    """Why: the decider's words, or what the system did it for (a timeout, the run's end, the workflow's policy)."""
    if detail.get("reason"):
        return str(detail["reason"])
    if detail.get("policy") == "deny":
        return POLICY_REASON
    if action == "expired":
        return store.RUN_ENDED_REASON if "run_status" in detail else store.EXPIRED_REASON
    return None


async def _names(org_id: UUID) -> dict[UUID, str]:
    """Every member's name as the console shows it (removed members too: the trail outlives them)."""
    members = await list_members(org_id, include_removed=True)
    return {m["user_id"]: m["display_name"] or m["email"] or m["subject"] for m in members}


def _entry(row: store.AuditEntry, names: dict[UUID, str]) -> dict[str, Any]:
    return {
        **dataclasses.asdict(row),
        "actor_name": names.get(row.actor_id) if row.actor_id else None,
        "owner_name": names.get(row.owner_id) if row.owner_id else None,
        "reason": _reason(row.action, row.detail or {}),
        "chat_url": f"/chats/{row.chat_id}" if row.chat_id else None,
        "run_url": f"/api/v1/runs/{row.run_id}",
    }


async def audit_trail(principal: Principal, limit: int, cursor: str | None) -> dict[str, Any]:
    try:
        before = int(cursor) if cursor else None
    except ValueError:
        raise InvalidInput("the cursor is not one this API gave", code="invalid_cursor") from None
    async with org_transaction(principal.org_id) as conn:
        rows = await store.audit_page(conn, before, limit + 1)
    names = await _names(principal.org_id) if rows else {}
    more = len(rows) > limit
    items = [_entry(row, names) for row in rows[:limit]]
    return {"items": items, "next_cursor": str(rows[limit - 1].id) if more else None}
