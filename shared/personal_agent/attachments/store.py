"""The only SQL on `attachments`. Calls run in an org transaction (RLS) and act as one user (`app.current_user`):
the table's restrictive policies (0046) show a session that user's own files and the files of the chats it may read
(its own, and a project's chats it is a member of), and let it change and delete only its own. Every call here that
names a user sets it, so a file of a chat the user may not read is missing even to a query that forgets to say so;
the calls that read a chat's files also say it in their own condition (`_CHAT_READER`)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = "id, chat_id, kind, filename, content_type, size, object_key, run_id, document_id, created_at"
# The attachment `a`'s chat is one the user (named twice) may read: theirs, or a project's they are a member of
# unless it is restricted (as `chats/store.py` reads chats, and as the row policy of 0046 says).
_CHAT_READER = (
    "EXISTS (SELECT 1 FROM chats c WHERE c.id = a.chat_id AND (c.user_id = %s OR (c.classification <> 'restricted'"
    " AND EXISTS (SELECT 1 FROM project_members pm WHERE pm.project_id = c.project_id AND pm.user_id = %s))))"
)


async def as_user(conn: Conn, user_id: UUID) -> None:
    """Scope the rest of the transaction to `user_id`'s attachments (transaction-local)."""
    await conn.execute("SELECT set_config('app.current_user', %s, true)", [str(user_id)])


async def insert(
    conn: Conn,
    *,
    attachment_id: UUID,
    org_id: UUID,
    user_id: UUID,
    chat_id: UUID,
    kind: str,
    filename: str,
    content_type: str,
    size: int,
    object_key: str,
    document_id: UUID | None = None,
) -> dict[str, Any]:
    await as_user(conn, user_id)
    cur = await conn.execute(
        "INSERT INTO attachments (id, org_id, user_id, chat_id, kind, filename, content_type, size, object_key,"
        f" document_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING {COLUMNS}",
        [attachment_id, org_id, user_id, chat_id, kind, filename, content_type, size, object_key, document_id],
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def get_owned(conn: Conn, attachment_id: UUID, user_id: UUID) -> dict[str, Any] | None:
    await as_user(conn, user_id)
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM attachments WHERE id = %s AND user_id = %s", [attachment_id, user_id]
    )
    return await cur.fetchone()


async def get_visible(conn: Conn, attachment_id: UUID, user_id: UUID) -> dict[str, Any] | None:
    """The attachment if the user may read its chat (whoever uploaded it); else None."""
    await as_user(conn, user_id)
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM attachments a WHERE a.id = %s AND {_CHAT_READER}", [attachment_id, user_id, user_id]
    )
    return await cur.fetchone()


async def get_in_chat(conn: Conn, attachment_id: UUID, chat_id: UUID, user_id: UUID) -> dict[str, Any] | None:
    """The attachment of `chat_id`, read as `user_id` (a share's maker, who owns the chat and so reads its files)."""
    await as_user(conn, user_id)
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM attachments WHERE id = %s AND chat_id = %s", [attachment_id, chat_id]
    )
    return await cur.fetchone()


async def owned_in_chat(conn: Conn, ids: list[UUID], user_id: UUID, chat_id: UUID) -> list[dict[str, Any]]:
    """The user's attachments of this chat among `ids` (the rest of the transaction acts as `user_id`)."""
    await as_user(conn, user_id)
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM attachments WHERE id = ANY(%s) AND user_id = %s AND chat_id = %s",
        [ids, user_id, chat_id],
    )
    return list(await cur.fetchall())


async def sent_in_chat(conn: Conn, chat_id: UUID, user_id: UUID) -> list[dict[str, Any]]:
    """The files sent in this chat, newest first, whoever sent them, if the user may read the chat (what
    `run_python` may read by name; in a project's chat, every member's)."""
    await as_user(conn, user_id)
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM attachments a WHERE a.chat_id = %s AND a.run_id IS NOT NULL AND {_CHAT_READER}"
        " ORDER BY a.created_at DESC LIMIT 200",
        [chat_id, user_id, user_id],
    )
    return list(await cur.fetchall())


async def mark_sent(conn: Conn, ids: list[UUID], run_id: UUID) -> int:
    """Bind the not-yet-sent attachments among `ids` to the run; how many were bound (as the transaction's user,
    whom `owned_in_chat` named when the launch checked them)."""
    cur = await conn.execute(
        "UPDATE attachments SET run_id = %s WHERE id = ANY(%s) AND run_id IS NULL RETURNING id", [run_id, ids]
    )
    return len(await cur.fetchall())


async def by_ids(conn: Conn, ids: list[UUID], user_id: UUID) -> list[dict[str, Any]]:
    """The attachments by id that `user_id` may see (the engine reads those its run's messages name, as the run's
    user: in a project's chat, every member's files)."""
    await as_user(conn, user_id)
    cur = await conn.execute(f"SELECT {COLUMNS} FROM attachments WHERE id = ANY(%s)", [ids])
    return list(await cur.fetchall())


async def delete_owned(conn: Conn, attachment_id: UUID, user_id: UUID) -> dict[str, Any] | None:
    await as_user(conn, user_id)
    cur = await conn.execute(
        f"DELETE FROM attachments WHERE id = %s AND user_id = %s RETURNING {COLUMNS}", [attachment_id, user_id]
    )
    return await cur.fetchone()


async def delete_sent_with(conn: Conn, run_ids: list[UUID], user_id: UUID) -> list[str]:
    """Delete the user's files sent with these runs and not indexed (an evaluation case's copies, what its code
    wrote); the object keys to delete once the transaction commits."""
    await as_user(conn, user_id)
    cur = await conn.execute(
        "DELETE FROM attachments WHERE run_id = ANY(%s) AND user_id = %s AND document_id IS NULL RETURNING object_key",
        [run_ids, user_id],
    )
    return [row["object_key"] for row in await cur.fetchall()]


async def export_page(conn: Conn, user_id: UUID, after: tuple[Any, UUID] | None, limit: int) -> list[dict[str, Any]]:
    """The user's attachments for a data export, oldest first, the next `limit` after `after` (created_at, id)."""
    await as_user(conn, user_id)
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM attachments WHERE user_id = %s"
        " AND (%s::timestamptz IS NULL OR (created_at, id) > (%s, %s)) ORDER BY created_at, id LIMIT %s",
        [user_id, after[0] if after else None, after[0] if after else None, after[1] if after else None, limit],
    )
    return list(await cur.fetchall())


def _due_chats(periods: dict[str, Any]) -> tuple[str, list[Any]]:
    """A condition on chats `c`: due now (temporary) or past its classification's period (`periods`: classification
    to the time before which it expired); with its arguments after `now`."""
    terms, args = ["c.temporary_until <= %s"], []
    for classification, before in periods.items():
        terms.append("(c.classification = %s AND c.updated_at < %s)")
        args += [classification, before]
    return " OR ".join(terms), args


async def due_for_retention(conn: Conn, periods: dict[str, Any], now: Any, batch: int) -> list[dict[str, Any]]:
    """Up to `batch` attachments the retention sweep deletes (a sweep transaction sees every member's): of a chat
    due (temporary, or inactive past its period), or made before their chat's classification's period."""
    due, args = _due_chats(periods)
    made = " OR ".join("(c.classification = %s AND a.created_at < %s)" for _ in periods) or "false"
    made_args = [v for pair in periods.items() for v in pair]
    cur = await conn.execute(
        "SELECT a.id, a.object_key FROM attachments a JOIN chats c ON c.id = a.chat_id"
        f" WHERE {due} OR {made} ORDER BY a.created_at LIMIT %s",
        [now, *args, *made_args, batch],
    )
    return list(await cur.fetchall())


async def delete_ids(conn: Conn, ids: list[Any]) -> int:
    cur = await conn.execute("DELETE FROM attachments WHERE id = ANY(%s) RETURNING id", [ids])
    return len(await cur.fetchall())
