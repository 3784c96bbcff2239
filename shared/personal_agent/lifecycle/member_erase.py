"""Offboarding's last step (issue 38): an org admin erases a member's content once the member is removed or disabled
(`POST /api/v1/org/members/{user_id}/erase`). The same erase as a person's own (`user_data.erase_person`: their
files, objects included, chats with their runs, messages and share links, memories and data exports), then a record
of it in `member_erasures` (who, by whom, how many of each; never content). The usage ledger and the approval audit
keep their rows. Who may erase whom is `identity.members.check_erasable`'s rule."""

from __future__ import annotations

from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.identity.members import check_erasable
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import erasure_store
from personal_agent.lifecycle.erasure_store import MemberErasure
from personal_agent.lifecycle.user_data import erase_person


async def erase_member(principal: Principal, user_id: UUID) -> MemberErasure:
    """Erase the member's content in the caller's org and record it; the record."""
    await check_erasable(principal, user_id)
    counts = await erase_person(principal.org_id, user_id)
    async with org_transaction(principal.org_id) as conn:
        return await erasure_store.record(conn, principal.org_id, user_id, principal.user_id, counts)


async def erasures(principal: Principal, limit: int) -> list[MemberErasure]:
    """The caller's org's erasures, newest first."""
    async with org_transaction(principal.org_id) as conn:
        return await erasure_store.recent(conn, limit)
