"""Chat rows and their messages: the only SQL on `chats` and `messages`. Every call runs inside an org
transaction (RLS); ownership is a `user_id` condition, so a chat of someone else reads as missing."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb

COLUMNS = "id, title, classification, created_at, updated_at"


async def insert_chat(
    conn: Conn, org_id: UUID, user_id: UUID | None, title: str, classification: str = "standard"
) -> dict[str, Any]:
    cur = await conn.execute(
        f"INSERT INTO chats (org_id, user_id, title, classification) VALUES (%s, %s, %s, %s) RETURNING {COLUMNS}",
        [org_id, user_id, title, classification],
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def chat_for_thread(conn: Conn, org_id: UUID, user_id: UUID, title: str, thread_id: str) -> UUID:
    """The user's chat of an external (AG-UI) thread id, created on first use."""
    cur = await conn.execute(
        "INSERT INTO chats (org_id, user_id, title, external_thread_id) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (org_id, user_id, external_thread_id) WHERE external_thread_id IS NOT NULL"
        " DO UPDATE SET updated_at = now() RETURNING id",
        [org_id, user_id, title, thread_id],
    )
    row = await cur.fetchone()
    assert row is not None
    return UUID(str(row["id"]))


# The words people and the assistant wrote in a message (the same path as the `search_tsv` column, 0020).
_MESSAGE_TEXT = (
    "(SELECT string_agg(t #>> '{}', ' ') FROM jsonb_array_elements(jsonb_path_query_array(m.message,"
    ' \'lax $.parts[*] ? (@.part_kind == "user-prompt" || @.part_kind == "text").content\')) AS t)'
)


async def list_owned(
    conn: Conn,
    user_id: UUID,
    before: tuple[datetime, UUID] | None,
    title_like: str | None,
    limit: int,
    words: str | None = None,
) -> list[dict[str, Any]]:
    """The user's chats, most recently updated first, after the keyset `before`; with `words`, those whose title
    matches `title_like` or whose messages match the full-text query, each with a `snippet` of its latest match."""
    clauses = ["c.user_id = %s"]
    params: list[Any] = [user_id]
    if before is not None:
        clauses.append("(c.updated_at, c.id) < (%s, %s)")
        params += list(before)
    if words is None:
        if title_like is not None:
            clauses.append("c.title ILIKE %s")
            params.append(title_like)
        sql = (
            f"SELECT c.id, c.title, c.classification, c.created_at, c.updated_at, NULL::text AS snippet FROM chats c"
            f" WHERE {' AND '.join(clauses)} ORDER BY c.updated_at DESC, c.id DESC LIMIT %s"
        )
        cur = await conn.execute(sql, [*params, limit])
        return list(await cur.fetchall())
    clauses.append("(c.title ILIKE %s OR hit.snippet IS NOT NULL)")
    sql = (
        "SELECT c.id, c.title, c.classification, c.created_at, c.updated_at, hit.snippet"
        " FROM chats c CROSS JOIN websearch_to_tsquery('english', %s) AS q(query)"
        " LEFT JOIN LATERAL ("
        f"  SELECT ts_headline('english', {_MESSAGE_TEXT}, q.query, 'MaxWords=16, MinWords=6, MaxFragments=1,"
        ' StartSel="", StopSel=""\') AS snippet'
        "  FROM messages m WHERE m.chat_id = c.id AND m.search_tsv @@ q.query ORDER BY m.id DESC LIMIT 1"
        " ) hit ON true"
        f" WHERE {' AND '.join(clauses)} ORDER BY c.updated_at DESC, c.id DESC LIMIT %s"
    )
    cur = await conn.execute(sql, [words, *params, title_like, limit])
    return list(await cur.fetchall())


async def get_owned(conn: Conn, chat_id: UUID, user_id: UUID | None) -> dict[str, Any] | None:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM chats WHERE id = %s AND user_id = %s", [chat_id, user_id])
    return await cur.fetchone()


async def update_owned(
    conn: Conn, chat_id: UUID, user_id: UUID, title: str | None, classification: str | None
) -> dict[str, Any] | None:
    """Change what is given (None keeps it); None when the user has no such chat."""
    cur = await conn.execute(
        "UPDATE chats SET title = coalesce(%s, title), classification = coalesce(%s, classification),"
        f" updated_at = now() WHERE id = %s AND user_id = %s RETURNING {COLUMNS}",
        [title, classification, chat_id, user_id],
    )
    return await cur.fetchone()


async def delete_owned(conn: Conn, chat_id: UUID, user_id: UUID) -> bool:
    cur = await conn.execute("DELETE FROM chats WHERE id = %s AND user_id = %s RETURNING id", [chat_id, user_id])
    return await cur.fetchone() is not None


async def classification(conn: Conn, chat_id: UUID) -> str | None:
    """The chat's data classification, or None when there is no such chat."""
    cur = await conn.execute("SELECT classification FROM chats WHERE id = %s", [chat_id])
    row = await cur.fetchone()
    return str(row["classification"]) if row else None


async def lock_chat(conn: Conn, chat_id: UUID) -> bool:
    """Lock the chat until the transaction ends (a run and its message land together); False when it is gone."""
    cur = await conn.execute("SELECT id FROM chats WHERE id = %s FOR UPDATE", [chat_id])
    return await cur.fetchone() is not None


async def append_messages(
    conn: Conn, org_id: UUID, chat_id: UUID, run_id: UUID | None, messages: list[dict[str, Any]]
) -> None:
    """Add messages (pydantic-ai JSON, each with its `kind`) to the chat and mark it updated."""
    for message in messages:
        await conn.execute(
            "INSERT INTO messages (org_id, chat_id, run_id, kind, message) VALUES (%s, %s, %s, %s, %s)",
            [org_id, chat_id, run_id, message["kind"], jsonb(message)],
        )
    await conn.execute("UPDATE chats SET updated_at = now() WHERE id = %s", [chat_id])


async def chat_messages(conn: Conn, chat_id: UUID, before_run: UUID | None = None) -> list[Any]:
    """The chat's stored messages (pydantic-ai JSON), oldest first, excluding `before_run`'s own."""
    cur = await conn.execute(
        "SELECT message FROM messages WHERE chat_id = %s AND (run_id IS DISTINCT FROM %s) ORDER BY id",
        [chat_id, before_run],
    )
    return [row["message"] for row in await cur.fetchall()]


async def chat_history(conn: Conn, chat_id: UUID, before_run: UUID) -> tuple[list[Any], int | None]:
    """`chat_messages(chat_id, before_run)` and the id of the newest of them, from one snapshot."""
    cur = await conn.execute(
        "SELECT id, message FROM messages WHERE chat_id = %s AND (run_id IS DISTINCT FROM %s) ORDER BY id",
        [chat_id, before_run],
    )
    rows = await cur.fetchall()
    return [row["message"] for row in rows], (rows[-1]["id"] if rows else None)


async def chat_history_upto(conn: Conn, chat_id: UUID, before_run: UUID, upto: int) -> list[Any]:
    """What `chat_history` returned when its newest id was `upto` (later messages left out)."""
    cur = await conn.execute(
        "SELECT message FROM messages WHERE chat_id = %s AND (run_id IS DISTINCT FROM %s) AND id <= %s ORDER BY id",
        [chat_id, before_run, upto],
    )
    return [row["message"] for row in await cur.fetchall()]


async def run_messages(conn: Conn, run_id: UUID) -> list[Any]:
    """The messages stored for one run (its user turn before it ends), oldest first."""
    cur = await conn.execute("SELECT message FROM messages WHERE run_id = %s ORDER BY id", [run_id])
    return [row["message"] for row in await cur.fetchall()]


async def message_rows_before(conn: Conn, chat_id: UUID, upper: int | None, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` message rows of the chat, newest first, with ids at most `upper` (all when None)."""
    below = "" if upper is None else " AND id <= %s"
    cur = await conn.execute(
        f"SELECT id, run_id, message, created_at FROM messages WHERE chat_id = %s{below} ORDER BY id DESC LIMIT %s",
        [chat_id, *([] if upper is None else [upper]), limit],
    )
    return list(await cur.fetchall())
