"""Memberships (`memberships`): a user's roles and status in an org. Calls run in the caller's transaction."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from personal_agent.db.pool import Conn

MemberStatus = Literal["active", "disabled", "removed"]


async def roles_and_status(conn: Conn, org_id: UUID, user_id: UUID) -> dict[str, Any] | None:
    """The membership's `roles` and `status` (None when the user never was a member)."""
    cur = await conn.execute(
        "SELECT roles, status FROM memberships WHERE org_id = %s AND user_id = %s", [org_id, user_id]
    )
    return await cur.fetchone()


async def states_of_user(conn: Conn, user_id: UUID) -> dict[str, str]:
    """The user's memberships in every org, org slug -> status, oldest first (before any org is chosen)."""
    # The membership_lookup policy shows this user's memberships while app.auth_user is set.
    await conn.execute("SELECT set_config('app.auth_user', %s, true)", [str(user_id)])
    rows = await (
        await conn.execute(
            "SELECT o.slug, m.status FROM memberships m JOIN orgs o ON o.id = m.org_id"
            " WHERE m.user_id = %s ORDER BY m.created_at, o.slug",
            [user_id],
        )
    ).fetchall()
    await conn.execute("SELECT set_config('app.auth_user', '', true)")
    return {r["slug"]: r["status"] for r in rows}


async def put_roles(conn: Conn, org_id: UUID, user_id: UUID, roles: list[str]) -> None:
    """Create the membership with `roles`, or set the roles of an active one."""
    await conn.execute(
        "INSERT INTO memberships (org_id, user_id, roles) VALUES (%s, %s, %s)"
        # An offboarded membership is never revived here: only an org admin re-enables it.
        " ON CONFLICT (org_id, user_id) DO UPDATE SET roles = EXCLUDED.roles WHERE memberships.status = 'active'",
        [org_id, user_id, roles],
    )


async def set_status(conn: Conn, org_id: UUID, user_id: UUID, status: MemberStatus, changed_by: UUID) -> None:
    """Record who changed the membership's status; a removed member's roles go back to `user`."""
    reset_roles = ", roles = ARRAY['user']" if status == "removed" else ""
    await conn.execute(
        f"UPDATE memberships SET status = %s, status_changed_at = now(), status_changed_by = %s{reset_roles}"
        " WHERE org_id = %s AND user_id = %s",
        [status, changed_by, org_id, user_id],
    )
