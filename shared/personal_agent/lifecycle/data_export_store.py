"""The only SQL on `data_exports` (0043): an export's progress and its object, inside an org transaction (RLS)
except `expired_orgs`, which names the orgs with an export past its time (a SECURITY DEFINER function)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.db.pool import Conn

_COLUMNS = "id, org_id, user_id, scope, status, object_key, size_bytes, error, created_at, finished_at, expires_at"


@dataclass(frozen=True)
class DataExport:
    id: UUID
    org_id: UUID
    user_id: UUID
    scope: str
    status: str
    object_key: str | None
    size_bytes: int | None
    error: str | None
    created_at: datetime
    finished_at: datetime | None
    expires_at: datetime


async def insert(conn: Conn, org_id: UUID, user_id: UUID, scope: str, expires_at: datetime) -> DataExport:
    cur = await conn.execute(
        f"INSERT INTO data_exports (org_id, user_id, scope, expires_at) VALUES (%s, %s, %s, %s) RETURNING {_COLUMNS}",
        [org_id, user_id, scope, expires_at],
    )
    row = await cur.fetchone()
    assert row is not None
    return DataExport(**row)


async def unfinished(conn: Conn, user_id: UUID, scope: str, since: datetime) -> DataExport | None:
    """The caller's newest export of `scope` still pending or running that was asked for after `since`."""
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM data_exports WHERE user_id = %s AND scope = %s AND status IN ('pending', 'running')"
        " AND created_at > %s ORDER BY created_at DESC LIMIT 1",
        [user_id, scope, since],
    )
    row = await cur.fetchone()
    return DataExport(**row) if row is not None else None


async def get(conn: Conn, export_id: UUID) -> DataExport | None:
    cur = await conn.execute(f"SELECT {_COLUMNS} FROM data_exports WHERE id = %s", [export_id])
    row = await cur.fetchone()
    return DataExport(**row) if row is not None else None


async def start(conn: Conn, export_id: UUID) -> DataExport | None:
    """Mark a pending export running (None when it is not pending: another invocation has it, or it ended)."""
    cur = await conn.execute(
        f"UPDATE data_exports SET status = 'running' WHERE id = %s AND status = 'pending' RETURNING {_COLUMNS}",
        [export_id],
    )
    row = await cur.fetchone()
    return DataExport(**row) if row is not None else None


async def finish(conn: Conn, export_id: UUID, object_key: str, size_bytes: int) -> None:
    await conn.execute(
        "UPDATE data_exports SET status = 'ready', object_key = %s, size_bytes = %s, finished_at = now() WHERE id = %s",
        [object_key, size_bytes, export_id],
    )


async def fail(conn: Conn, export_id: UUID, error: str) -> None:
    await conn.execute(
        "UPDATE data_exports SET status = 'failed', error = %s, finished_at = now() WHERE id = %s",
        [error, export_id],
    )


async def expired(conn: Conn, now: datetime, limit: int) -> list[DataExport]:
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM data_exports WHERE expires_at <= %s ORDER BY expires_at LIMIT %s", [now, limit]
    )
    return [DataExport(**row) for row in await cur.fetchall()]


async def of_user(conn: Conn, user_id: UUID, scope: str, limit: int) -> list[DataExport]:
    """The user's exports of `scope`, oldest first."""
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM data_exports WHERE user_id = %s AND scope = %s ORDER BY created_at LIMIT %s",
        [user_id, scope, limit],
    )
    return [DataExport(**row) for row in await cur.fetchall()]


async def delete(conn: Conn, export_ids: list[UUID]) -> int:
    cur = await conn.execute("DELETE FROM data_exports WHERE id = ANY(%s) RETURNING id", [export_ids])
    return len(await cur.fetchall())


async def expired_orgs(conn: Conn, now: datetime, limit: int) -> list[UUID]:
    """The orgs with an export past its time (a system transaction)."""
    cur = await conn.execute("SELECT pa_expired_export_orgs(%s, %s) AS org_id", [now, limit])
    return [row["org_id"] for row in await cur.fetchall()]
