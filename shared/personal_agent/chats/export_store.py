"""Reads for a data export (issue 38): a person's chats (temporary ones too) or every chat of the org, and every
message of a chat, all branches and summaries, in the order they were written — page by page, so an export of any
size is read in bounded memory. Inside an org transaction (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

_CHAT = "id, user_id, title, classification, created_at, updated_at, temporary_until"
_MESSAGE = "id, parent_id, run_id, kind, message, created_at"


@dataclass(frozen=True)
class ExportChat:
    id: UUID
    user_id: UUID
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


@dataclass(frozen=True)
class MessageLink:
    """A message's place in the tree, without its content."""

    id: int
    parent_id: int | None
    kind: str


async def chats_page(
    conn: Conn, user_id: UUID | None, after: tuple[datetime, UUID] | None, limit: int
) -> list[ExportChat]:
    """The next `limit` chats after `after` (created_at, id) — the user's, or the org's when `user_id` is None."""
    where: list[str] = ["true"]
    args: list[Any] = []
    if user_id is not None:
        where.append("user_id = %s")
        args.append(user_id)
    if after is not None:
        where.append("(created_at, id) > (%s, %s)")
        args += list(after)
    cur = await conn.execute(
        f"SELECT {_CHAT} FROM chats WHERE {' AND '.join(where)} ORDER BY created_at, id LIMIT %s", [*args, limit]
    )
    return [ExportChat(**row) for row in await cur.fetchall()]


async def messages_page(conn: Conn, chat_id: UUID, after_id: int, limit: int) -> list[ExportMessage]:
    cur = await conn.execute(
        f"SELECT {_MESSAGE} FROM messages WHERE chat_id = %s AND id > %s ORDER BY id LIMIT %s",
        [chat_id, after_id, limit],
    )
    return [ExportMessage(**row) for row in await cur.fetchall()]


async def message_links(conn: Conn, chat_id: UUID, limit: int) -> list[MessageLink]:
    cur = await conn.execute(
        "SELECT id, parent_id, kind FROM messages WHERE chat_id = %s ORDER BY id LIMIT %s", [chat_id, limit]
    )
    return [MessageLink(**row) for row in await cur.fetchall()]


async def messages_by_id(conn: Conn, chat_id: UUID, ids: list[int]) -> list[ExportMessage]:
    cur = await conn.execute(
        f"SELECT {_MESSAGE} FROM messages WHERE chat_id = %s AND id = ANY(%s) ORDER BY id", [chat_id, ids]
    )
    return [ExportMessage(**row) for row in await cur.fetchall()]
