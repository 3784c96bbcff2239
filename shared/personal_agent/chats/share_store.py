"""Share links of chats: the only SQL on `chat_shares` and `share_audit` (0036). Every call runs inside an org
transaction (RLS) except `share_org`, which maps a token's hash to the org to read it in (a SECURITY DEFINER
function that returns nothing else)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb

_LISTED = (
    "id, chat_id, audience, title, classification, upto_message_id, show_tools, expires_at, revoked_at, created_at"
)


@dataclass(frozen=True)
class ShareRow:
    """A share as its maker lists it (no snapshot)."""

    id: UUID
    chat_id: UUID
    audience: str
    title: str
    classification: str
    upto_message_id: int | None
    show_tools: bool
    expires_at: datetime | None
    revoked_at: datetime | None
    created_at: datetime


@dataclass(frozen=True)
class SharedSnapshot:
    """A share with what it froze: `snapshot` (transcript items) and `messages` (what a continue copies)."""

    row: ShareRow
    org_id: UUID
    user_id: UUID
    content_tier: int
    untrusted: bool
    snapshot: list[dict[str, Any]]
    messages: list[dict[str, Any]]


@dataclass(frozen=True)
class NewShare:
    chat_id: UUID
    token_hash: str
    audience: str
    title: str
    classification: str
    content_tier: int
    untrusted: bool
    upto_message_id: int | None
    show_tools: bool
    snapshot: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    expires_at: datetime | None


async def insert_share(conn: Conn, org_id: UUID, user_id: UUID, share: NewShare) -> ShareRow:
    cur = await conn.execute(
        "INSERT INTO chat_shares (org_id, chat_id, user_id, token_hash, audience, title, classification, content_tier,"
        " untrusted, upto_message_id, show_tools, snapshot, messages, expires_at)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_LISTED}",
        [
            org_id,
            share.chat_id,
            user_id,
            share.token_hash,
            share.audience,
            share.title,
            share.classification,
            share.content_tier,
            share.untrusted,
            share.upto_message_id,
            share.show_tools,
            jsonb(share.snapshot),
            jsonb(share.messages),
            share.expires_at,
        ],
    )
    row = await cur.fetchone()
    assert row is not None
    return ShareRow(**row)


async def share_org(conn: Conn, token_hash: str) -> UUID | None:
    """The org a share's token belongs to (None: no such token); run in a system transaction."""
    cur = await conn.execute("SELECT pa_share_org(%s) AS org_id", [token_hash])
    row = await cur.fetchone()
    return row["org_id"] if row and row["org_id"] else None


async def live_share(conn: Conn, token_hash: str, now: datetime) -> SharedSnapshot | None:
    """The share of this token with its snapshot, unless revoked or expired by `now` (None then, as for no such
    token)."""
    cur = await conn.execute(
        f"SELECT {_LISTED}, org_id, user_id, content_tier, untrusted, snapshot, messages FROM chat_shares"
        " WHERE token_hash = %s AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > %s)",
        [token_hash, now],
    )
    row = await cur.fetchone()
    if row is None:
        return None
    frozen = {key: row.pop(key) for key in ("org_id", "user_id", "content_tier", "untrusted", "snapshot", "messages")}
    return SharedSnapshot(row=ShareRow(**row), **frozen)


async def list_of_user(conn: Conn, user_id: UUID, limit: int) -> list[ShareRow]:
    cur = await conn.execute(
        f"SELECT {_LISTED} FROM chat_shares WHERE user_id = %s ORDER BY created_at DESC, id DESC LIMIT %s",
        [user_id, limit],
    )
    return [ShareRow(**row) for row in await cur.fetchall()]


async def list_of_org(conn: Conn, limit: int) -> list[ShareRow]:
    """Every share link of the org (an org admin's export), newest first."""
    cur = await conn.execute(f"SELECT {_LISTED} FROM chat_shares ORDER BY created_at DESC, id DESC LIMIT %s", [limit])
    return [ShareRow(**row) for row in await cur.fetchall()]


async def revoke(conn: Conn, share_id: UUID, user_id: UUID) -> ShareRow | None:
    """Revoke the user's share (again is a no-op that still returns it); None when the user has no such share."""
    cur = await conn.execute(
        "UPDATE chat_shares SET revoked_at = coalesce(revoked_at, now()) WHERE id = %s AND user_id = %s"
        f" RETURNING {_LISTED}",
        [share_id, user_id],
    )
    row = await cur.fetchone()
    return ShareRow(**row) if row is not None else None


async def audit(conn: Conn, org_id: UUID, share: ShareRow, actor_id: UUID | None, action: str) -> None:
    await conn.execute(
        "INSERT INTO share_audit (org_id, share_id, chat_id, actor_id, action, audience)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        [org_id, share.id, share.chat_id, actor_id, action, share.audience],
    )


@dataclass(frozen=True)
class ShareAuditRow:
    share_id: UUID
    chat_id: UUID
    actor_id: UUID | None
    action: str
    audience: str
    created_at: datetime


async def audit_trail(conn: Conn, limit: int) -> list[ShareAuditRow]:
    """The org's share audit, newest first."""
    cur = await conn.execute(
        "SELECT share_id, chat_id, actor_id, action, audience, created_at FROM share_audit ORDER BY id DESC LIMIT %s",
        [limit],
    )
    return [ShareAuditRow(**row) for row in await cur.fetchall()]
