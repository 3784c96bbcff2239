"""An org's data policy (0036): the only SQL on `org_data_policies`, and the retention sweep's deletes of chats and
its record in `retention_runs` (counts only). Inside an org transaction (RLS) except `due_orgs`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.db.pool import Conn

DEFAULT_TEMPORARY_HOURS = 24


@dataclass(frozen=True)
class DataPolicy:
    allow_public_shares: bool = False
    temporary_hours: int = DEFAULT_TEMPORARY_HOURS
    standard_days: int | None = None
    confidential_days: int | None = None
    restricted_days: int | None = None


_COLUMNS = "allow_public_shares, temporary_hours, standard_days, confidential_days, restricted_days"


async def policy(conn: Conn, org_id: UUID) -> DataPolicy:
    """The org's policy (the defaults when it never set one)."""
    cur = await conn.execute(f"SELECT {_COLUMNS} FROM org_data_policies WHERE org_id = %s", [org_id])
    row = await cur.fetchone()
    return DataPolicy(**row) if row is not None else DataPolicy()


async def put_policy(conn: Conn, org_id: UUID, value: DataPolicy) -> DataPolicy:
    cur = await conn.execute(
        f"INSERT INTO org_data_policies (org_id, {_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (org_id) DO UPDATE SET allow_public_shares = excluded.allow_public_shares,"
        " temporary_hours = excluded.temporary_hours, standard_days = excluded.standard_days,"
        " confidential_days = excluded.confidential_days, restricted_days = excluded.restricted_days,"
        f" updated_at = now() RETURNING {_COLUMNS}",
        [
            org_id,
            value.allow_public_shares,
            value.temporary_hours,
            value.standard_days,
            value.confidential_days,
            value.restricted_days,
        ],
    )
    row = await cur.fetchone()
    assert row is not None
    return DataPolicy(**row)


async def due_orgs(conn: Conn, now: datetime, limit: int) -> list[UUID]:
    """The orgs with a temporary chat due by `now` or a retention period set (a system transaction)."""
    cur = await conn.execute("SELECT pa_retention_due_orgs(%s, %s) AS org_id", [now, limit])
    return [row["org_id"] for row in await cur.fetchall()]


async def mark_temporary(conn: Conn, org_id: UUID, chat_id: UUID) -> datetime:
    """Make the chat temporary: due `temporary_hours` (the org's, else the default) from now; when."""
    cur = await conn.execute(
        "UPDATE chats SET temporary_until = now() + make_interval(hours => coalesce("
        "(SELECT temporary_hours FROM org_data_policies WHERE org_id = %s), %s)) WHERE id = %s"
        " RETURNING temporary_until",
        [org_id, DEFAULT_TEMPORARY_HOURS, chat_id],
    )
    row = await cur.fetchone()
    assert row is not None  # the chat was made in this transaction
    until: datetime = row["temporary_until"]
    return until


async def delete_temporary(conn: Conn, now: datetime, batch: int) -> int:
    """Delete up to `batch` temporary chats due by `now` (their runs and messages go with them; the usage ledger
    does not reference runs, so it keeps its rows); how many."""
    cur = await conn.execute(
        "DELETE FROM chats WHERE id IN (SELECT id FROM chats WHERE temporary_until <= %s ORDER BY temporary_until"
        " LIMIT %s FOR UPDATE SKIP LOCKED) RETURNING id",
        [now, batch],
    )
    return len(await cur.fetchall())


async def delete_expired(conn: Conn, classification: str, before: datetime, batch: int) -> int:
    """Delete up to `batch` chats of `classification` with no activity since `before`; how many."""
    cur = await conn.execute(
        "DELETE FROM chats WHERE id IN (SELECT id FROM chats WHERE classification = %s AND updated_at < %s"
        " ORDER BY updated_at LIMIT %s FOR UPDATE SKIP LOCKED) RETURNING id",
        [classification, before, batch],
    )
    return len(await cur.fetchall())


async def record_run(
    conn: Conn,
    org_id: UUID,
    temporary_chats: int,
    expired_chats: int,
    expired_exports: int = 0,
    *,
    expired_attachments: int = 0,
    expired_documents: int = 0,
    expired_memories: int = 0,
) -> None:
    await conn.execute(
        "INSERT INTO retention_runs (org_id, temporary_chats, expired_chats, expired_exports, expired_attachments,"
        " expired_documents, expired_memories) VALUES (%s, %s, %s, %s, %s, %s, %s)",
        [
            org_id,
            temporary_chats,
            expired_chats,
            expired_exports,
            expired_attachments,
            expired_documents,
            expired_memories,
        ],
    )


async def erase_owned_chats(conn: Conn, user_id: UUID) -> int:
    """Delete every chat of the user (their runs, messages and shares go with them; the ledger stays); how many."""
    cur = await conn.execute("DELETE FROM chats WHERE user_id = %s RETURNING id", [user_id])
    return len(await cur.fetchall())
