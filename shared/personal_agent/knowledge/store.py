"""The SQL of `knowledge_documents` (one store per table); the caller's transaction decides what is visible."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = (
    "id, org_id, created_by, owner_user_id, collection, filename, content_type, size, classification, object_key, "
    "trusted, status, error_code, error_message, object_version, pages, chunk_count, created_at, updated_at"
)


async def insert_document(conn: Conn, values: dict[str, Any]) -> dict[str, Any]:
    cur = await conn.execute(
        f"""INSERT INTO knowledge_documents (id, org_id, created_by, owner_user_id, collection, filename,
                content_type, size, classification, object_key, trusted)
            VALUES (%(id)s, %(org_id)s, %(created_by)s, %(owner_user_id)s, %(collection)s, %(filename)s,
                %(content_type)s, %(size)s, %(classification)s, %(object_key)s, %(trusted)s)
            RETURNING {COLUMNS}""",
        values,
    )
    row = await cur.fetchone()
    assert row is not None
    return dict(row)


async def get_document(conn: Conn, document_id: UUID, *, lock: bool = False) -> dict[str, Any] | None:
    lock_clause = " FOR UPDATE" if lock else ""
    cur = await conn.execute(f"SELECT {COLUMNS} FROM knowledge_documents WHERE id = %s{lock_clause}", [document_id])
    row = await cur.fetchone()
    return dict(row) if row else None


async def list_documents(conn: Conn, collections: tuple[str, ...], limit: int) -> list[dict[str, Any]]:
    cur = await conn.execute(
        f"""SELECT {COLUMNS} FROM knowledge_documents WHERE collection = ANY(%s)
            ORDER BY created_at DESC, id DESC LIMIT %s""",
        [list(collections), limit],
    )
    return [dict(r) for r in await cur.fetchall()]


async def set_status(
    conn: Conn, document_id: UUID, status: str, error: tuple[str, str] | None = None, *, version: str | None = None
) -> dict[str, Any] | None:
    """Change the status (and the error, cleared unless given); `version`: the object version it is about."""
    code, message = error if error is not None else (None, None)
    cur = await conn.execute(
        f"""UPDATE knowledge_documents SET status = %s, error_code = %s, error_message = %s,
                object_version = COALESCE(%s, object_version), updated_at = now(),
                chunk_count = CASE WHEN %s = 'failed' THEN 0 ELSE chunk_count END
            WHERE id = %s RETURNING {COLUMNS}""",
        [status, code, message, version, status, document_id],
    )
    row = await cur.fetchone()
    return dict(row) if row else None


async def set_trusted(conn: Conn, document_id: UUID, trusted: bool) -> dict[str, Any] | None:
    """An admin vouches for the document's text (or stops): None when the caller may not change it."""
    cur = await conn.execute(
        f"UPDATE knowledge_documents SET trusted = %s, updated_at = now() WHERE id = %s RETURNING {COLUMNS}",
        [trusted, document_id],
    )
    row = await cur.fetchone()
    return dict(row) if row else None


async def mark_ready(conn: Conn, document_id: UUID, version: str, pages: int | None, chunks: int) -> dict[str, Any]:
    cur = await conn.execute(
        f"""UPDATE knowledge_documents SET status = 'ready', error_code = NULL, error_message = NULL,
                object_version = %s, pages = %s, chunk_count = %s, updated_at = now()
            WHERE id = %s RETURNING {COLUMNS}""",
        [version, pages, chunks, document_id],
    )
    row = await cur.fetchone()
    assert row is not None
    return dict(row)


async def delete_document(conn: Conn, document_id: UUID) -> dict[str, Any] | None:
    """Delete the row (its chunks go with it, ON DELETE CASCADE); the deleted row, or None if not visible."""
    cur = await conn.execute(f"DELETE FROM knowledge_documents WHERE id = %s RETURNING {COLUMNS}", [document_id])
    row = await cur.fetchone()
    return dict(row) if row else None


async def ready_document_ids(conn: Conn) -> list[UUID]:
    """The org's documents with chunks (a worker transaction sees every owner's)."""
    cur = await conn.execute("SELECT id FROM knowledge_documents WHERE status = 'ready' ORDER BY created_at")
    return [r["id"] for r in await cur.fetchall()]


async def classifications(conn: Conn) -> set[str]:
    """The classifications of the org's documents (a worker transaction sees every owner's)."""
    cur = await conn.execute("SELECT DISTINCT classification FROM knowledge_documents")
    return {r["classification"] for r in await cur.fetchall()}


async def insert_source_document(conn: Conn, values: dict[str, Any], source_id: UUID, web: bool) -> dict[str, Any]:
    """A document a source brought in (`web`: fetched from the web, untrusted for every reader; migration 0030)."""
    row = await insert_document(conn, values)
    await conn.execute(
        "UPDATE knowledge_documents SET source_id = %s, web = %s WHERE id = %s", [source_id, web, row["id"]]
    )
    return row


async def replace_source_file(conn: Conn, document_id: UUID, size: int, content_type: str) -> dict[str, Any] | None:
    """A source's object or page changed: the size and type its next version is checked against at ingest."""
    cur = await conn.execute(
        f"""UPDATE knowledge_documents SET size = %s, content_type = %s, updated_at = now()
            WHERE id = %s RETURNING {COLUMNS}""",
        [size, content_type, document_id],
    )
    row = await cur.fetchone()
    return dict(row) if row else None


async def export_page(
    conn: Conn, created_by: UUID | None, after: tuple[Any, UUID] | None, limit: int
) -> list[dict[str, Any]]:
    """Documents for a data export, oldest first, the next `limit` after `after` (created_at, id): those
    `created_by` uploaded (a worker transaction sees every owner's), or with None the org's shared ones (no owner).
    A chat's files are left out (the export has them as attachments)."""
    who = "created_by = %s" if created_by is not None else "owner_user_id IS NULL AND %s::uuid IS NULL"
    cur = await conn.execute(
        f"SELECT {COLUMNS}, source_id, web FROM knowledge_documents WHERE {who} AND collection NOT LIKE 'chat:%%'"
        " AND (%s::timestamptz IS NULL OR (created_at, id) > (%s, %s)) ORDER BY created_at, id LIMIT %s",
        [created_by, after[0] if after else None, after[0] if after else None, after[1] if after else None, limit],
    )
    return [dict(r) for r in await cur.fetchall()]


async def owned_by(conn: Conn, owner: UUID, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` documents `owner` owns (personal and chat collections), for erasing them; a worker
    transaction sees every owner's."""
    cur = await conn.execute(
        "SELECT id, object_key FROM knowledge_documents WHERE owner_user_id = %s ORDER BY id LIMIT %s", [owner, limit]
    )
    return [dict(r) for r in await cur.fetchall()]


async def due_for_retention(conn: Conn, periods: dict[str, Any], now: Any, batch: int) -> list[dict[str, Any]]:
    """Up to `batch` documents the retention sweep deletes (a worker transaction sees every owner's): unchanged
    since before their classification's period (`periods`: classification to that time), or a chat's files whose
    chat is due (temporary, or inactive past its period)."""
    own = " OR ".join("(d.classification = %s AND d.updated_at < %s)" for _ in periods) or "false"
    chat = " OR ".join("(c.classification = %s AND c.updated_at < %s)" for _ in periods)
    pairs = [v for pair in periods.items() for v in pair]
    cur = await conn.execute(
        f"SELECT d.id, d.object_key FROM knowledge_documents d WHERE {own} OR d.collection IN (SELECT 'chat:' || c.id"
        f" FROM chats c WHERE c.temporary_until <= %s {'OR ' + chat if chat else ''}) ORDER BY d.updated_at LIMIT %s",
        [*pairs, now, *pairs, batch],
    )
    return [dict(r) for r in await cur.fetchall()]


async def delete_ids(conn: Conn, ids: list[Any]) -> int:
    """Delete the documents (their chunks go with them); how many."""
    cur = await conn.execute("DELETE FROM knowledge_documents WHERE id = ANY(%s) RETURNING id", [ids])
    return len(await cur.fetchall())
