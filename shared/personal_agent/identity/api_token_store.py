"""Personal access tokens (`api_tokens`), stored by their SHA-256. Calls run in the caller's transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = (
    "t.id, t.name, t.prefix, o.slug AS org_slug, t.roles, t.expires_at, t.revoked_at, t.last_used_at, t.created_at"
)


async def insert(
    conn: Conn,
    org_id: UUID,
    user_id: UUID,
    name: str,
    token_hash: str,
    prefix: str,
    roles: list[str],
    expires_at: datetime | None,
) -> dict[str, Any]:
    """The new token's `COLUMNS`."""
    cur = await conn.execute(
        "WITH t AS (INSERT INTO api_tokens (org_id, user_id, name, token_hash, prefix, roles, expires_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING *)"
        f" SELECT {COLUMNS} FROM t JOIN orgs o ON o.id = t.org_id",
        [org_id, user_id, name, token_hash, prefix, roles, expires_at],
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def of_user(conn: Conn, user_id: UUID) -> list[dict[str, Any]]:
    """The user's tokens in the transaction's org, newest first (revoked ones included)."""
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM api_tokens t JOIN orgs o ON o.id = t.org_id"
        " WHERE t.user_id = %s ORDER BY t.created_at DESC, t.id",
        [user_id],
    )
    return list(await cur.fetchall())


async def by_hash(conn: Conn, token_hash: str) -> dict[str, Any] | None:
    """The token with this hash, with its org slug, owner and whether it is revoked, expired or its owner disabled.

    Found before its org is known, through the `token_lookup` RLS policy (the one row whose hash is in
    `app.token_hash`)."""
    await conn.execute("SELECT set_config('app.token_hash', %s, true)", [token_hash])
    cur = await conn.execute(
        "SELECT t.id, t.org_id, t.user_id, t.roles, t.revoked_at IS NOT NULL AS revoked,"
        " t.expires_at IS NOT NULL AND t.expires_at <= now() AS expired, o.slug, u.subject,"
        " u.disabled_at IS NOT NULL AS user_disabled"
        " FROM api_tokens t JOIN orgs o ON o.id = t.org_id JOIN users u ON u.id = t.user_id"
    )
    return await cur.fetchone()


async def revoke(conn: Conn, token_id: UUID, user_id: UUID, *, anyones: bool) -> bool:
    """Revoke the user's token (`anyones`: any token of the org); False when there is no such token."""
    cur = await conn.execute(
        "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = %s AND (user_id = %s OR %s)",
        [token_id, user_id, anyones],
    )
    return cur.rowcount > 0


async def revoke_all_of(conn: Conn, org_id: UUID, user_id: UUID) -> None:
    """Revoke every live token the user holds in the org."""
    await conn.execute(
        "UPDATE api_tokens SET revoked_at = now() WHERE org_id = %s AND user_id = %s AND revoked_at IS NULL",
        [org_id, user_id],
    )


async def mark_used(conn: Conn, token_id: UUID) -> None:
    # At most one write a minute per token: last_used_at is for display, not for auditing.
    await conn.execute(
        "UPDATE api_tokens SET last_used_at = now()"
        " WHERE id = %s AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
        [token_id],
    )
