"""The only SQL on `push_subscriptions`. Every call runs in an org transaction that first names the owner
(`app.current_user`): the restrictive policy shows a session only that user's rows."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = "id, endpoint, p256dh, auth, created_at"
MAX_PER_USER = 20  # browsers and devices one person keeps subscribed; the oldest goes past it


async def as_user(conn: Conn, user_id: UUID) -> None:
    await conn.execute("SELECT set_config('app.current_user', %s, true)", [str(user_id)])


async def upsert(
    conn: Conn, org_id: UUID, user_id: UUID, endpoint: str, p256dh: str, auth: str
) -> tuple[dict[str, Any], bool]:
    """Store the subscription (the same endpoint again takes the new keys); whether it is new."""
    cur = await conn.execute(
        "INSERT INTO push_subscriptions (org_id, user_id, endpoint, p256dh, auth) VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (org_id, user_id, endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth"
        f" RETURNING {COLUMNS}, (xmax = 0) AS created",
        [org_id, user_id, endpoint, p256dh, auth],
    )
    row = await cur.fetchone()
    assert row is not None
    await conn.execute(
        "DELETE FROM push_subscriptions WHERE user_id = %s AND id NOT IN (SELECT id FROM push_subscriptions"
        " WHERE user_id = %s ORDER BY created_at DESC, id LIMIT %s)",
        [user_id, user_id, MAX_PER_USER],
    )
    return row, bool(row["created"])


async def list_own(conn: Conn, user_id: UUID) -> list[dict[str, Any]]:
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM push_subscriptions WHERE user_id = %s ORDER BY created_at, id", [user_id]
    )
    return await cur.fetchall()


async def delete(conn: Conn, subscription_id: UUID, user_id: UUID) -> bool:
    cur = await conn.execute(
        "DELETE FROM push_subscriptions WHERE id = %s AND user_id = %s", [subscription_id, user_id]
    )
    return cur.rowcount > 0


async def delete_endpoint(conn: Conn, user_id: UUID, endpoint: str) -> None:
    """A push service said the endpoint is gone (404/410): forget it."""
    await conn.execute("DELETE FROM push_subscriptions WHERE user_id = %s AND endpoint = %s", [user_id, endpoint])
