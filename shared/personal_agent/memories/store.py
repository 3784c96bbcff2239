"""The only SQL on `memories`. Every call runs in an org transaction and first names the owner
(`app.current_user`): the table's restrictive policy shows a session only that user's rows, so a memory of
another user, or of another org, reads as missing."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = "id, text, source_run_id, created_at, updated_at, project_id"
# A memory's scope (0041): a project's memories are recalled only in its chats, the rest only outside projects.
_SCOPE = "project_id IS NOT DISTINCT FROM %s"


async def as_user(conn: Conn, user_id: UUID) -> None:
    """Scope the rest of the transaction to `user_id`'s memories (transaction-local)."""
    await conn.execute("SELECT set_config('app.current_user', %s, true)", [str(user_id)])


async def count(conn: Conn, user_id: UUID) -> int:
    cur = await conn.execute("SELECT count(*) AS n FROM memories WHERE user_id = %s", [user_id])
    row = await cur.fetchone()
    return int(row["n"]) if row else 0


async def insert(
    conn: Conn,
    org_id: UUID,
    user_id: UUID,
    text: str,
    source_run_id: UUID | None = None,
    content_tier: int = 0,
    project_id: UUID | None = None,
) -> dict[str, Any]:
    cur = await conn.execute(
        "INSERT INTO memories (org_id, user_id, text, source_run_id, content_tier, project_id)"
        f" VALUES (%s, %s, %s, %s, %s, %s) RETURNING {COLUMNS}",
        [org_id, user_id, text, source_run_id, content_tier, project_id],
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def find_same(conn: Conn, user_id: UUID, text: str, project_id: UUID | None = None) -> dict[str, Any] | None:
    """The user's memory with exactly this text (case and surrounding space aside) in the same scope, if any."""
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE user_id = %s AND lower(btrim(text)) = lower(btrim(%s)) AND {_SCOPE}",
        [user_id, text, project_id],
    )
    return await cur.fetchone()


async def list_own(conn: Conn, user_id: UUID, limit: int) -> list[dict[str, Any]]:
    """The user's memories, most recently changed first."""
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE user_id = %s ORDER BY updated_at DESC, id DESC LIMIT %s",
        [user_id, limit],
    )
    return list(await cur.fetchall())


async def with_embeddings(
    conn: Conn, user_id: UUID, limit: int, max_tier: int, project_id: UUID | None = None
) -> list[dict[str, Any]]:
    """The user's memories of at most `max_tier` in one scope (a project's; None: outside projects) with their
    stored embedding (and its model), most recently changed first."""
    cur = await conn.execute(
        f"SELECT {COLUMNS}, embedding, embedding_model FROM memories WHERE user_id = %s AND content_tier <= %s"
        f" AND {_SCOPE} ORDER BY updated_at DESC, id DESC LIMIT %s",
        [user_id, max_tier, project_id, limit],
    )
    return list(await cur.fetchall())


async def set_embedding(conn: Conn, memory_id: UUID, text: str, embedding: list[float], model: str) -> None:
    """Store the embedding of `text`; a memory edited meanwhile (its text differs) keeps none."""
    await conn.execute(
        "UPDATE memories SET embedding = %s, embedding_model = %s WHERE id = %s AND text = %s",
        [embedding, model, memory_id, text],
    )


async def update_text(conn: Conn, memory_id: UUID, user_id: UUID, text: str) -> dict[str, Any] | None:
    """New text (its old embedding goes); None when the user has no such memory."""
    cur = await conn.execute(
        "UPDATE memories SET text = %s, embedding = NULL, embedding_model = NULL, updated_at = now()"
        f" WHERE id = %s AND user_id = %s RETURNING {COLUMNS}",
        [text, memory_id, user_id],
    )
    return await cur.fetchone()


async def delete(conn: Conn, memory_id: UUID, user_id: UUID) -> bool:
    cur = await conn.execute("DELETE FROM memories WHERE id = %s AND user_id = %s RETURNING id", [memory_id, user_id])
    return await cur.fetchone() is not None


async def raise_tier(conn: Conn, memory_id: UUID, content_tier: int) -> None:
    """The same text saved again from data of a higher tier: the memory takes that tier."""
    await conn.execute(
        "UPDATE memories SET content_tier = greatest(content_tier, %s) WHERE id = %s", [content_tier, memory_id]
    )


async def recallable_tier(conn: Conn, user_id: UUID, floor: int, project_id: UUID | None = None) -> int:
    """The highest content tier among the user's memories (of one scope) a run whose models pass `floor` may
    recall."""
    cur = await conn.execute(
        "SELECT coalesce(max(content_tier), 0) AS tier FROM memories WHERE user_id = %s AND content_tier <= %s"
        f" AND {_SCOPE}",
        [user_id, floor, project_id],
    )
    row = await cur.fetchone()
    return int(row["tier"]) if row else 0


async def delete_expired(conn: Conn, content_tier: int, before: Any, batch: int) -> int:
    """Delete up to `batch` memories of `content_tier` unchanged since `before` (a retention sweep's transaction
    sees every member's); how many."""
    cur = await conn.execute(
        "DELETE FROM memories WHERE id IN (SELECT id FROM memories WHERE content_tier = %s AND updated_at < %s"
        " ORDER BY updated_at LIMIT %s FOR UPDATE SKIP LOCKED) RETURNING id",
        [content_tier, before, batch],
    )
    return len(await cur.fetchall())
