"""Approvals that need two people (a tool rule with `quorum: 2`): neither may be the requester (the run's user),
the same person counts once, and the approval stays pending, its run waiting, until the second approves. A deny
from anyone who may decide ends it at once. Edited arguments are refused on such an approval: the second person
would approve a call the first never saw."""

from __future__ import annotations

from typing import Any

from personal_agent.approvals import review_store, store
from personal_agent.db.pool import Conn
from personal_agent.errors import Conflict, Forbidden, InvalidInput
from personal_agent.identity.principal import Principal


async def needs_more(
    conn: Conn,
    principal: Principal,
    row: store.LockedApproval,
    reason: str | None,
    arguments: dict[str, Any] | None,
) -> bool:
    """Count the caller's approval; True while the approval still needs another approver (audited as one of
    its approvals), False when it needs no quorum or this approval completes it."""
    quorum, approvers = await review_store.quorum_of(conn, row.id)
    if quorum < 2:
        return False
    if principal.user_id == row.owner_id:
        raise Forbidden(
            "this call needs two approvers other than the person whose run asked for it",
            code="requester_cannot_approve",
        )
    if arguments is not None:
        raise InvalidInput("an approval that needs two people takes no edited arguments", code="arguments_need_quorum")
    if principal.user_id in approvers:
        raise Conflict("you already approved this call; it needs a second person", code="already_approved_by_you")
    approvers = await review_store.add_approver(conn, row.id, principal.user_id)
    if len(approvers) >= quorum:
        return False
    detail = {"reason": reason, "approvals": len(approvers), "quorum": quorum}
    await store.audit(conn, principal.org_id, row.id, principal.user_id, "approved_partly", detail)
    return True
