"""Channel users linked to org members (`channel_links`) and the one-time codes that link them
(`channel_link_codes`). Calls run in the caller's org transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.channels.config_store import ChannelKind
from personal_agent.db.pool import Conn


@dataclass(frozen=True)
class ChannelLink:
    kind: ChannelKind
    external_id: str
    user_id: UUID
    label: str
    created_at: datetime


@dataclass(frozen=True)
class LinkCode:
    code: str
    kind: ChannelKind
    external_id: str
    label: str
    expires_at: datetime


async def linked_user(conn: Conn, kind: ChannelKind, external_id: str) -> UUID | None:
    cur = await conn.execute(
        "SELECT user_id FROM channel_links WHERE kind = %s AND external_id = %s", [kind, external_id]
    )
    row = await cur.fetchone()
    return row["user_id"] if row else None


async def links_of(conn: Conn, user_id: UUID) -> list[ChannelLink]:
    cur = await conn.execute(
        "SELECT kind, external_id, user_id, label, created_at FROM channel_links WHERE user_id = %s"
        " ORDER BY created_at",
        [user_id],
    )
    return [ChannelLink(**r) for r in await cur.fetchall()]


async def link(conn: Conn, org_id: UUID, code: LinkCode, user_id: UUID) -> ChannelLink:
    """Link the code's sender to `user_id` (a sender linked before moves to the newest member who confirms)."""
    cur = await conn.execute(
        "INSERT INTO channel_links (org_id, kind, external_id, user_id, label) VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (org_id, kind, external_id) DO UPDATE SET user_id = EXCLUDED.user_id, label = EXCLUDED.label,"
        " created_at = now() RETURNING kind, external_id, user_id, label, created_at",
        [org_id, code.kind, code.external_id, user_id, code.label],
    )
    row = await cur.fetchone()
    assert row is not None
    return ChannelLink(**row)


async def unlink(conn: Conn, user_id: UUID, kind: ChannelKind, external_id: str) -> bool:
    cur = await conn.execute(
        "DELETE FROM channel_links WHERE user_id = %s AND kind = %s AND external_id = %s", [user_id, kind, external_id]
    )
    return cur.rowcount > 0


async def live_code(conn: Conn, kind: ChannelKind, external_id: str) -> str | None:
    """The sender's unused code that is still valid (one code per sender at a time)."""
    cur = await conn.execute(
        "SELECT code FROM channel_link_codes WHERE kind = %s AND external_id = %s AND used_at IS NULL"
        " AND expires_at > now() ORDER BY expires_at DESC LIMIT 1",
        [kind, external_id],
    )
    row = await cur.fetchone()
    return row["code"] if row else None


async def insert_code(
    conn: Conn, org_id: UUID, code: str, kind: ChannelKind, external_id: str, label: str, valid_seconds: int
) -> None:
    await conn.execute(
        "INSERT INTO channel_link_codes (code, org_id, kind, external_id, label, expires_at)"
        " VALUES (%s, %s, %s, %s, %s, now() + make_interval(secs => %s))",
        [code, org_id, kind, external_id, label, valid_seconds],
    )


async def take_code(conn: Conn, code: str) -> LinkCode | None:
    """Use the code once: None when it is unknown (or another org's), used or expired."""
    cur = await conn.execute(
        "UPDATE channel_link_codes SET used_at = now() WHERE code = %s AND used_at IS NULL AND expires_at > now()"
        " RETURNING code, kind, external_id, label, expires_at",
        [code],
    )
    row = await cur.fetchone()
    return LinkCode(**row) if row else None
