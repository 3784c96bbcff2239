"""The SQL of `knowledge_sources` and `knowledge_source_items` (migration 0030): where a collection's documents
come from, and what each object or page brought in. Reads return typed rows."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn


@dataclass(frozen=True)
class Source:
    id: UUID
    org_id: UUID
    collection_id: UUID
    kind: str
    bucket: str | None
    prefix: str
    url: str | None
    allow_hosts: list[str]
    every: str | None
    classification: str
    created_by: UUID
    created_at: datetime
    next_sync_at: datetime | None
    last_sync_at: datetime | None
    last_sync: dict[str, Any] | None


@dataclass(frozen=True)
class Item:
    item_key: str
    document_id: UUID | None
    content_hash: str | None
    etag: str | None
    last_modified: str | None


_COLUMNS = (
    "id, org_id, collection_id, kind, bucket, prefix, url, allow_hosts, every, classification, created_by, "
    "created_at, next_sync_at, last_sync_at, last_sync"
)
_ITEM = "item_key, document_id, content_hash, etag, last_modified"


async def insert(conn: Conn, values: dict[str, Any]) -> Source:
    cur = await conn.execute(
        f"""INSERT INTO knowledge_sources (org_id, collection_id, kind, bucket, prefix, url, allow_hosts, every,
                classification, created_by, next_sync_at)
            VALUES (%(org_id)s, %(collection_id)s, %(kind)s, %(bucket)s, %(prefix)s, %(url)s, %(allow_hosts)s,
                %(every)s, %(classification)s, %(created_by)s, %(next_sync_at)s)
            RETURNING {_COLUMNS}""",
        values,
    )
    row = await cur.fetchone()
    assert row is not None
    return Source(**row)


async def get(conn: Conn, source_id: UUID, *, lock: bool = False) -> Source | None:
    lock_clause = " FOR UPDATE" if lock else ""
    cur = await conn.execute(f"SELECT {_COLUMNS} FROM knowledge_sources WHERE id = %s{lock_clause}", [source_id])
    row = await cur.fetchone()
    return Source(**row) if row else None


async def list_in(conn: Conn, collection_ids: list[UUID]) -> list[Source]:
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM knowledge_sources WHERE collection_id = ANY(%s) ORDER BY created_at DESC, id",
        [collection_ids],
    )
    return [Source(**r) for r in await cur.fetchall()]


async def delete(conn: Conn, source_id: UUID) -> list[str]:
    """Delete the source and the documents it brought in (ON DELETE CASCADE); their files' keys, to delete next."""
    cur = await conn.execute("SELECT object_key FROM knowledge_documents WHERE source_id = %s", [source_id])
    keys = [r["object_key"] for r in await cur.fetchall()]
    await conn.execute("DELETE FROM knowledge_sources WHERE id = %s", [source_id])
    return keys


async def lock_due(conn: Conn, source_id: UUID, now: datetime) -> Source | None:
    """The source, locked, when its next sync is due at `now` (None: not due, or another scheduler holds it)."""
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM knowledge_sources WHERE id = %s AND next_sync_at <= %s FOR UPDATE SKIP LOCKED",
        [source_id, now],
    )
    row = await cur.fetchone()
    return Source(**row) if row else None


async def set_next_sync(conn: Conn, source_id: UUID, next_sync_at: datetime | None) -> None:
    await conn.execute("UPDATE knowledge_sources SET next_sync_at = %s WHERE id = %s", [next_sync_at, source_id])


async def record_sync(conn: Conn, source_id: UUID, report: dict[str, Any]) -> None:
    await conn.execute(
        "UPDATE knowledge_sources SET last_sync_at = now(), last_sync = %s::jsonb WHERE id = %s",
        [json.dumps(report), source_id],
    )


async def sources_of_bucket(conn: Conn, bucket: str) -> list[tuple[UUID, UUID, str]]:
    """(org, source, prefix) of every org's S3 sources on `bucket` (a SECURITY DEFINER lookup: pointers only)."""
    cur = await conn.execute("SELECT org_id, source_id, prefix FROM pa_knowledge_sources_of_bucket(%s)", [bucket])
    return [(r["org_id"], r["source_id"], r["prefix"]) for r in await cur.fetchall()]


async def due_sources(conn: Conn, now: datetime, limit: int) -> list[tuple[UUID, UUID]]:
    cur = await conn.execute("SELECT org_id, source_id FROM pa_due_knowledge_sources(%s, %s)", [now, limit])
    return [(r["org_id"], r["source_id"]) for r in await cur.fetchall()]


async def items(conn: Conn, source_id: UUID) -> dict[str, Item]:
    cur = await conn.execute(f"SELECT {_ITEM} FROM knowledge_source_items WHERE source_id = %s", [source_id])
    return {r["item_key"]: Item(**r) for r in await cur.fetchall()}


async def lock_item(conn: Conn, org_id: UUID, source_id: UUID, key: str) -> Item:
    """The item's row, made if new, locked for the rest of the transaction (one sync of an object at a time)."""
    await conn.execute(
        "INSERT INTO knowledge_source_items (source_id, org_id, item_key) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
        [source_id, org_id, key],
    )
    cur = await conn.execute(
        f"SELECT {_ITEM} FROM knowledge_source_items WHERE source_id = %s AND item_key = %s FOR UPDATE",
        [source_id, key],
    )
    row = await cur.fetchone()
    assert row is not None
    return Item(**row)


async def set_item(
    conn: Conn,
    source_id: UUID,
    key: str,
    document_id: UUID | None,
    digest: str | None,
    etag: str | None,
    modified: str | None,
) -> None:
    await conn.execute(
        """UPDATE knowledge_source_items SET document_id = %s, content_hash = %s, etag = %s, last_modified = %s,
               updated_at = now() WHERE source_id = %s AND item_key = %s""",
        [document_id, digest, etag, modified, source_id, key],
    )


async def delete_item(conn: Conn, source_id: UUID, key: str) -> None:
    await conn.execute("DELETE FROM knowledge_source_items WHERE source_id = %s AND item_key = %s", [source_id, key])


# A sync in chunks (migration 0044): the sync in progress, and which listed items it has brought in step.


async def cursor(conn: Conn, source_id: UUID, *, lock: bool = False) -> dict[str, Any] | None:
    lock_clause = " FOR UPDATE" if lock else ""
    cur = await conn.execute(f"SELECT sync_cursor FROM knowledge_sources WHERE id = %s{lock_clause}", [source_id])
    row = await cur.fetchone()
    return dict(row["sync_cursor"]) if row and row["sync_cursor"] else None


async def set_cursor(conn: Conn, source_id: UUID, value: dict[str, Any] | None) -> None:
    await conn.execute(
        "UPDATE knowledge_sources SET sync_cursor = %s::jsonb WHERE id = %s",
        [json.dumps(value) if value is not None else None, source_id],
    )


async def mark_listed(
    conn: Conn, org_id: UUID, source_id: UUID, run: UUID, listed: list[tuple[str, str | None]]
) -> None:
    """Mark every listed item (key, the listing's ETag) as listed by sync `run`, making rows for new ones."""
    await conn.execute(
        """INSERT INTO knowledge_source_items (source_id, org_id, item_key, listed_in, listed_etag)
           SELECT %s, %s, k, %s, e FROM unnest(%s::text[], %s::text[]) AS t(k, e)
           ON CONFLICT (source_id, item_key) DO UPDATE SET listed_in = EXCLUDED.listed_in,
               listed_etag = EXCLUDED.listed_etag""",
        [source_id, org_id, run, [k for k, _ in listed], [e for _, e in listed]],
    )


async def listed_to_do(conn: Conn, source_id: UUID, run: UUID, limit: int) -> list[tuple[Item, str | None]]:
    """Items sync `run` listed and has not brought in step yet (with the listing's ETag), in key order."""
    cur = await conn.execute(
        f"""SELECT {_ITEM}, listed_etag FROM knowledge_source_items
            WHERE source_id = %s AND listed_in = %s AND done_in IS DISTINCT FROM %s ORDER BY item_key LIMIT %s""",
        [source_id, run, run, limit],
    )
    rows = await cur.fetchall()
    return [(Item(**{k: r[k] for k in r if k != "listed_etag"}), r["listed_etag"]) for r in rows]


async def unlisted(conn: Conn, source_id: UUID, run: UUID, started: datetime, limit: int) -> list[str]:
    """Keys of items sync `run` did not list (gone from the source), but not those an object event brought in
    after the listing."""
    cur = await conn.execute(
        """SELECT item_key FROM knowledge_source_items WHERE source_id = %s AND listed_in IS DISTINCT FROM %s
               AND updated_at < %s ORDER BY item_key LIMIT %s""",
        [source_id, run, started, limit],
    )
    return [r["item_key"] for r in await cur.fetchall()]


async def mark_done(conn: Conn, source_id: UUID, key: str, run: UUID) -> None:
    await conn.execute(
        "UPDATE knowledge_source_items SET done_in = %s WHERE source_id = %s AND item_key = %s", [run, source_id, key]
    )
