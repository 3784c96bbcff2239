"""User accounts (`users`), one per issuer and subject. Calls run in the caller's transaction."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

_SEEN = "id, email, display_name, disabled_at"


async def by_identity(conn: Conn, issuer: str, subject: str) -> dict[str, Any] | None:
    """The user's id, email, display name and `disabled_at` (None before the first sign-in)."""
    cur = await conn.execute(f"SELECT {_SEEN} FROM users WHERE issuer = %s AND subject = %s", [issuer, subject])
    return await cur.fetchone()


async def insert(conn: Conn, issuer: str, subject: str, email: str | None, name: str | None) -> dict[str, Any]:
    """The new user (or the one a concurrent first sign-in created), as `by_identity` returns it."""
    cur = await conn.execute(
        "INSERT INTO users (issuer, subject, email, display_name) VALUES (%s, %s, %s, %s)"
        f" ON CONFLICT (issuer, subject) DO UPDATE SET email = users.email RETURNING {_SEEN}",
        [issuer, subject, email, name],
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def update_profile(conn: Conn, user_id: UUID, email: str | None, name: str | None) -> None:
    """Keep the stored email and display name (None leaves one as it is)."""
    await conn.execute(
        "UPDATE users SET email = COALESCE(%s, email), display_name = COALESCE(%s, display_name) WHERE id = %s",
        [email, name, user_id],
    )


async def set_disabled(conn: Conn, user_id: UUID, disabled: bool) -> dict[str, Any] | None:
    """Disable (keeping the first time) or enable the account; None when there is no such user."""
    cur = await conn.execute(
        "UPDATE users SET disabled_at = CASE WHEN %s THEN COALESCE(disabled_at, now()) END WHERE id = %s"
        " RETURNING id AS user_id, issuer, subject, email, display_name, disabled_at",
        [disabled, user_id],
    )
    row = await cur.fetchone()
    return dict(row) if row else None


async def display_names(conn: Conn, user_ids: list[UUID]) -> dict[UUID, str]:
    """What to call each of the users `user_ids` in a transcript: their display name, else email, else subject."""
    cur = await conn.execute(
        "SELECT id, coalesce(display_name, email, subject) AS name FROM users WHERE id = ANY(%s::uuid[])", [user_ids]
    )
    return {row["id"]: str(row["name"]) for row in await cur.fetchall()}
