"""Reads for a person's data export (issue 38): all their chats (temporary ones too) and every message of a chat,
all branches and summaries, in the order they were written. Inside an org transaction (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn


@dataclass(frozen=True)
class ExportChat:
    id: UUID
    title: str
    classification: str
    created_at: datetime
    updated_at: datetime
    temporary_until: datetime | None


@dataclass(frozen=True)
class ExportMessage:
    id: int
    parent_id: int | None
    run_id: UUID | None
    kind: str
    message: Any
    created_at: datetime


async def chats_of(conn: Conn, user_id: UUID, limit: int) -> list[ExportChat]:
    cur = await conn.execute(
        "SELECT id, title, classification, created_at, updated_at, temporary_until FROM chats WHERE user_id = %s"
        " ORDER BY created_at, id LIMIT %s",
        [user_id, limit],
    )
    return [ExportChat(**row) for row in await cur.fetchall()]


async def messages_of(conn: Conn, chat_id: UUID, limit: int) -> list[ExportMessage]:
    cur = await conn.execute(
        "SELECT id, parent_id, run_id, kind, message, created_at FROM messages WHERE chat_id = %s ORDER BY id LIMIT %s",
        [chat_id, limit],
    )
    return [ExportMessage(**row) for row in await cur.fetchall()]
