"""Chat rows. A chat is private to its owner; anyone else (same org or not) gets 404."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.chats.transcript import TranscriptPage, parse_cursor
from personal_agent.db import org_transaction
from personal_agent.db.keyset import decode_uuid_cursor, encode_cursor
from personal_agent.errors import InvalidInput, NotFound
from personal_agent.identity.principal import Principal

COLUMNS = "id, title, classification, created_at, updated_at"
MAX_TITLE = 200
TRANSCRIPT_BATCH = 50  # message rows read at a time while a page fills


def _title(title: str | None) -> str:
    text = (title or "").strip() or "New chat"
    if len(text) > MAX_TITLE:
        raise InvalidInput(f"the title is longer than {MAX_TITLE} characters", code="title_too_long")
    return text


def _chat_cursor(row: dict[str, Any]) -> str:
    return encode_cursor(row["updated_at"], row["id"])


async def create_chat(principal: Principal, title: str | None, classification: str = "standard") -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        cur = await conn.execute(
            f"INSERT INTO chats (org_id, user_id, title, classification) VALUES (%s, %s, %s, %s) RETURNING {COLUMNS}",
            [principal.org_id, principal.user_id, _title(title), classification],
        )
        row = await cur.fetchone()
    assert row is not None
    return row


async def list_chats(principal: Principal, limit: int, cursor: str | None, q: str | None) -> dict[str, Any]:
    clauses = ["user_id = %s"]
    params: list[Any] = [principal.user_id]
    if cursor:
        updated, chat_id = decode_uuid_cursor(cursor)
        clauses.append("(updated_at, id) < (%s, %s)")
        params += [updated, chat_id]
    if q:
        clauses.append("title ILIKE %s")
        params.append("%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    sql = f"SELECT {COLUMNS} FROM chats WHERE {' AND '.join(clauses)} ORDER BY updated_at DESC, id DESC LIMIT %s"
    async with org_transaction(principal.org_id) as conn:
        cur = await conn.execute(sql, [*params, limit + 1])
        rows = await cur.fetchall()
    next_cursor = _chat_cursor(rows[limit - 1]) if len(rows) > limit else None
    return {"items": rows[:limit], "next_cursor": next_cursor}


async def get_chat(principal: Principal, chat_id: UUID) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM chats WHERE id = %s AND user_id = %s", [chat_id, principal.user_id]
        )
        row = await cur.fetchone()
    if row is None:
        raise NotFound("chat not found", code="chat_not_found")
    return row


async def update_chat(
    principal: Principal, chat_id: UUID, title: str | None, classification: str | None
) -> dict[str, Any]:
    """Rename a chat and/or change its data classification (which decides the models it may reach)."""
    async with org_transaction(principal.org_id) as conn:
        cur = await conn.execute(
            "UPDATE chats SET title = coalesce(%s, title), classification = coalesce(%s, classification),"
            f" updated_at = now() WHERE id = %s AND user_id = %s RETURNING {COLUMNS}",
            [_title(title) if title is not None else None, classification, chat_id, principal.user_id],
        )
        row = await cur.fetchone()
    if row is None:
        raise NotFound("chat not found", code="chat_not_found")
    return row


async def delete_chat(principal: Principal, chat_id: UUID) -> None:
    async with org_transaction(principal.org_id) as conn:
        cur = await conn.execute(
            "DELETE FROM chats WHERE id = %s AND user_id = %s RETURNING id", [chat_id, principal.user_id]
        )
        if await cur.fetchone() is None:
            raise NotFound("chat not found", code="chat_not_found")


async def transcript_page(principal: Principal, chat_id: UUID, limit: int, cursor: str | None) -> dict[str, Any]:
    """A page of the chat's transcript, newest first across pages (`chats.transcript` says how it is cut)."""
    page = TranscriptPage(limit, parse_cursor(cursor) if cursor else None)
    await get_chat(principal, chat_id)
    upper = page.before[0] if page.before else None
    async with org_transaction(principal.org_id) as conn:
        while not page.full:
            below = "" if upper is None else " AND id <= %s"
            cur = await conn.execute(
                "SELECT id, run_id, message, created_at FROM messages"
                f" WHERE chat_id = %s{below} ORDER BY id DESC LIMIT %s",
                [chat_id, *([] if upper is None else [upper]), TRANSCRIPT_BATCH],
            )
            rows = await cur.fetchall()
            for row in rows:
                if not page.add_row(row):
                    break
            if len(rows) < TRANSCRIPT_BATCH:
                break
            upper = rows[-1]["id"] - 1
    return page.body()
