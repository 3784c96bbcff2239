"""A channel's conversation threads and the chats they land in (`channel_threads`), and every inbound message or
action once (`channel_events`: idempotency, replay refusal and the admin's log). Calls run in the caller's org
transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.channels.config_store import ChannelKind
from personal_agent.db.pool import Conn


@dataclass(frozen=True)
class ChannelEvent:
    kind: ChannelKind
    event_id: str
    external_id: str
    status: str
    run_id: UUID | None
    created_at: datetime


async def chat_of(conn: Conn, kind: ChannelKind, thread_key: str) -> UUID | None:
    cur = await conn.execute(
        "SELECT t.chat_id FROM channel_threads t JOIN chats c ON c.id = t.chat_id"
        " WHERE t.kind = %s AND t.thread_key = %s",
        [kind, thread_key],
    )
    row = await cur.fetchone()
    return row["chat_id"] if row else None


async def bind(conn: Conn, org_id: UUID, kind: ChannelKind, thread_key: str, chat_id: UUID) -> None:
    await conn.execute(
        "INSERT INTO channel_threads (org_id, kind, thread_key, chat_id) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (org_id, kind, thread_key) DO UPDATE SET chat_id = EXCLUDED.chat_id",
        [org_id, kind, thread_key, chat_id],
    )


async def first_seen(conn: Conn, org_id: UUID, kind: ChannelKind, event_id: str, external_id: str) -> bool:
    """Record an inbound event; False when it was seen before (a retry or a replay)."""
    cur = await conn.execute(
        "INSERT INTO channel_events (org_id, kind, event_id, external_id) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING",
        [org_id, kind, event_id[:1000], external_id[:320]],
    )
    return cur.rowcount > 0


async def set_status(conn: Conn, kind: ChannelKind, event_id: str, status: str, run_id: UUID | None = None) -> None:
    await conn.execute(
        "UPDATE channel_events SET status = %s, run_id = COALESCE(%s, run_id) WHERE kind = %s AND event_id = %s",
        [status, run_id, kind, event_id[:1000]],
    )


async def recent(conn: Conn, kind: ChannelKind, limit: int = 50) -> list[ChannelEvent]:
    cur = await conn.execute(
        "SELECT kind, event_id, external_id, status, run_id, created_at FROM channel_events WHERE kind = %s"
        " AND event_id NOT LIKE 'sig:%%' ORDER BY created_at DESC LIMIT %s",  # a request's signature: not a message
        [kind, limit],
    )
    return [ChannelEvent(**r) for r in await cur.fetchall()]
