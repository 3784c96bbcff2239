"""Who may act: an org's members (administered by org admins) and user accounts (by platform admins).

The rules, enforced here and nowhere else:
- An org admin acts on memberships of the current org only. A user without a membership there, or
  one already removed, is 404 `member_not_found`, whether or not the user exists in another org.
- Nobody offboards themselves (409 `cannot_offboard_self`): another admin does it, so an admin cannot
  lock themselves out by mistake. That also keeps the last admin: the caller is an active admin of the
  org and stays one, and offboardings in one org are serialised with the caller re-checked, so two
  admins removing each other leave one. Only a platform admin may offboard a member who holds `admin`
  (403 `role_required` for an org admin). A platform admin disabling an account is the one override.
- Disabling is reversible (`enable_member`). Removing resets the member's roles to `user`, revokes
  their personal access tokens in the org, and keeps the membership as a tombstone, so a token whose
  IdP still names the org cannot re-create it; `enable_member` re-admits a removed member.
- A platform admin disables a user everywhere (every org, every token) and can enable them again.
- Every change is effective on the next request: each request re-reads the user and the membership.
Nothing here deletes chats, runs, usage or workflows. Erasing an offboarded member's content is a separate, explicit
step (`check_erasable` says who may; `lifecycle.member_erase` does it).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, org_transaction, system_transaction
from personal_agent.errors import Conflict, Forbidden, NotFound
from personal_agent.identity import api_token_store, membership_store, user_store
from personal_agent.identity.auth_cache import revoked
from personal_agent.identity.directory import membership_refusal, user_refusal
from personal_agent.identity.membership_store import MemberStatus
from personal_agent.identity.principal import Principal

_COLUMNS = (
    "m.user_id, u.subject, u.email, u.display_name, m.roles, m.status, m.status_changed_at,"
    " u.disabled_at IS NOT NULL AS user_disabled, m.created_at"
)
_FROM = " FROM memberships m JOIN users u ON u.id = m.user_id"


async def list_members(org_id: UUID, *, include_removed: bool = False) -> list[dict[str, Any]]:
    """The org's members with their user details, oldest membership first (removed ones on request)."""
    where = "" if include_removed else " WHERE m.status <> 'removed'"
    async with org_transaction(org_id) as conn:
        rows = await (
            await conn.execute(f"SELECT {_COLUMNS}{_FROM}{where} ORDER BY m.created_at, u.subject")
        ).fetchall()
    return [dict(r) for r in rows]


async def _member(conn: Conn, user_id: UUID) -> dict[str, Any] | None:
    row = await (await conn.execute(f"SELECT {_COLUMNS}{_FROM} WHERE m.user_id = %s", [user_id])).fetchone()
    return dict(row) if row else None


async def _offboardable(conn: Conn, principal: Principal, user_id: UUID) -> dict[str, Any]:
    """The member about to be disabled or removed, after the rules above; holds the org's offboarding lock."""
    if user_id == principal.user_id:
        raise Conflict("you cannot disable or remove yourself; ask another admin", code="cannot_offboard_self")
    # One offboarding at a time per org, and the acting admin must still be active once it is their turn:
    # two admins removing each other cannot leave the org with none. NO KEY UPDATE does not block inserts
    # that reference the org (they take KEY SHARE).
    await conn.execute("SELECT id FROM orgs WHERE id = %s FOR NO KEY UPDATE", [principal.org_id])
    actor = await _member(conn, principal.user_id)
    if actor is None or actor["status"] != "active":
        raise membership_refusal(actor["status"] if actor else "removed")
    member = await _member(conn, user_id)
    if member is None or member["status"] == "removed":
        raise NotFound("no such member in this org", code="member_not_found")
    if "admin" in member["roles"] and "admin" not in principal.roles:
        raise Forbidden("only a platform admin can offboard a platform admin", code="role_required")
    return member


async def _set_status(conn: Conn, principal: Principal, user_id: UUID, status: MemberStatus) -> dict[str, Any]:
    await membership_store.set_status(conn, principal.org_id, user_id, status, principal.user_id)
    member = await _member(conn, user_id)
    assert member is not None
    return member


async def remove_member(principal: Principal, user_id: UUID) -> None:
    """End a membership: tombstone it, reset its roles and revoke the member's tokens in this org."""
    async with org_transaction(principal.org_id) as conn:
        await _offboardable(conn, principal, user_id)
        await _set_status(conn, principal, user_id, "removed")
        await api_token_store.revoke_all_of(conn, principal.org_id, user_id)
    await revoked()


async def disable_member(principal: Principal, user_id: UUID) -> dict[str, Any]:
    """Suspend a membership: every request of the member in this org is refused until it is enabled."""
    async with org_transaction(principal.org_id) as conn:
        member = await _offboardable(conn, principal, user_id)
        if member["status"] == "disabled":
            return member
        changed = await _set_status(conn, principal, user_id, "disabled")
    await revoked()
    return changed


async def check_erasable(principal: Principal, user_id: UUID) -> None:
    """Whether an org admin may erase a member's content (`lifecycle.member_erase`): a member of this org in any
    status (404 `member_not_found` otherwise), no longer active (409 `member_active`: remove or disable them first),
    never the caller (409 `cannot_offboard_self`), and one holding `admin` only by a platform admin."""
    if user_id == principal.user_id:
        raise Conflict("you cannot erase yourself here; erase your own data in Settings", code="cannot_offboard_self")
    async with org_transaction(principal.org_id) as conn:
        member = await _member(conn, user_id)
    if member is None:
        raise NotFound("no such member in this org", code="member_not_found")
    if member["status"] == "active":
        raise Conflict("remove or disable the member before erasing their content", code="member_active")
    if "admin" in member["roles"] and "admin" not in principal.roles:
        raise Forbidden("only a platform admin can erase a platform admin's content", code="role_required")


async def enable_member(principal: Principal, user_id: UUID) -> dict[str, Any]:
    """Let a disabled or removed member act in this org again (a removed one comes back as `user`)."""
    async with org_transaction(principal.org_id) as conn:
        member = await _member(conn, user_id)
        if member is None:
            raise NotFound("no such member in this org", code="member_not_found")
        if member["status"] == "active":
            return member
        return await _set_status(conn, principal, user_id, "active")


async def set_user_disabled(principal: Principal, user_id: UUID, *, disabled: bool) -> dict[str, Any]:
    """Disable (or enable) a user account everywhere: every org, every token. Platform admins only."""
    if disabled and user_id == principal.user_id:
        raise Conflict("you cannot disable yourself; ask another platform admin", code="cannot_offboard_self")
    async with system_transaction() as conn:
        row = await user_store.set_disabled(conn, user_id, disabled)
    if row is None:
        raise NotFound("no such user", code="user_not_found")
    await revoked()
    return row


async def ensure_member_active(org_id: UUID, user_id: UUID) -> None:
    """403 unless `user_id` is an active member of the org with an enabled account: what a run started on a
    person's behalf by a webhook or a schedule checks, so an offboarded owner's workflows stop with them."""
    async with org_transaction(org_id) as conn:
        await check_member_active(conn, user_id)


async def check_member_active(conn: Conn, user_id: UUID) -> None:
    """`ensure_member_active` in the caller's org transaction."""
    row = await _member(conn, user_id)
    if row is None:
        raise membership_refusal("removed")
    if row["user_disabled"]:
        raise user_refusal()
    if row["status"] != "active":
        raise membership_refusal(row["status"])
