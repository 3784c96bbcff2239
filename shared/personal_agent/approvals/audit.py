"""The approval audit trail for org admins: who asked, approved, denied or let expire which tool call, newest
first, paged by the audit row id."""

from __future__ import annotations

from typing import Any

from personal_agent.approvals import store
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.identity.principal import Principal


async def audit_trail(principal: Principal, limit: int, cursor: str | None) -> dict[str, Any]:
    try:
        before = int(cursor) if cursor else None
    except ValueError:
        raise InvalidInput("the cursor is not one this API gave", code="invalid_cursor") from None
    async with org_transaction(principal.org_id) as conn:
        rows = await store.audit_page(conn, before, limit + 1)
    more = len(rows) > limit
    return {"items": rows[:limit], "next_cursor": str(rows[limit - 1].id) if more else None}
