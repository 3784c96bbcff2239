"""Writes for the import of our own export (issue 38), the mirror of `export_store`: a chat and its messages as the
export stored them (title, classification, times; each message with its kind, pydantic-ai JSON, parent and time),
so a chat comes back with the same tree. Inside the importer's org transaction (RLS); runs are not restored, so a
message's `run_id` stays null."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb


async def insert_chat(
    conn: Conn,
    org_id: UUID,
    user_id: UUID,
    title: str,
    classification: str,
    created_at: datetime,
    updated_at: datetime,
    temporary_until: datetime | None,
) -> UUID:
    cur = await conn.execute(
        "INSERT INTO chats (org_id, user_id, title, classification, created_at, updated_at, temporary_until)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
        [org_id, user_id, title, classification, created_at, updated_at, temporary_until],
    )
    row = await cur.fetchone()
    assert row is not None
    return UUID(str(row["id"]))


async def insert_message(
    conn: Conn,
    org_id: UUID,
    chat_id: UUID,
    kind: str,
    message: dict[str, Any],
    parent_id: int | None,
    created_at: datetime,
) -> int:
    """One message below `parent_id` (None: a first turn); its new id."""
    cur = await conn.execute(
        "INSERT INTO messages (org_id, chat_id, kind, message, parent_id, created_at)"
        " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
        [org_id, chat_id, kind, jsonb(message), parent_id, created_at],
    )
    row = await cur.fetchone()
    assert row is not None
    return int(row["id"])
