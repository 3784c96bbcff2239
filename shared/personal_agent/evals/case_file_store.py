"""The SQL of `eval_case_files`: the files an evaluation case carries. Runs inside an org transaction (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.db.pool import Conn

_COLUMNS = "f.id, f.case_id, f.filename, f.content_type, f.size, f.object_key, f.created_at"


@dataclass(frozen=True)
class CaseFileRow:
    id: UUID
    case_id: UUID
    filename: str
    content_type: str
    size: int
    object_key: str
    created_at: datetime


async def insert(
    conn: Conn, org_id: UUID, file_id: UUID, case_id: UUID, filename: str, content_type: str, size: int, key: str
) -> CaseFileRow:
    cur = await conn.execute(
        "INSERT INTO eval_case_files AS f (id, org_id, case_id, filename, content_type, size, object_key)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
        [file_id, org_id, case_id, filename, content_type, size, key],
    )
    row = await cur.fetchone()
    assert row is not None
    return CaseFileRow(**row)


async def of_cases(conn: Conn, case_ids: list[UUID]) -> dict[UUID, list[CaseFileRow]]:
    """Each case's files, oldest first (cases without files are missing from the answer)."""
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM eval_case_files f WHERE f.case_id = ANY(%s) ORDER BY f.created_at, f.id", [case_ids]
    )
    found: dict[UUID, list[CaseFileRow]] = {}
    for row in await cur.fetchall():
        found.setdefault(row["case_id"], []).append(CaseFileRow(**row))
    return found


async def get(conn: Conn, dataset_id: UUID, case_id: UUID, file_id: UUID) -> CaseFileRow | None:
    """The file if it is of this case of this dataset."""
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM eval_case_files f JOIN eval_cases c ON c.id = f.case_id"
        " WHERE f.id = %s AND f.case_id = %s AND c.dataset_id = %s",
        [file_id, case_id, dataset_id],
    )
    row = await cur.fetchone()
    return CaseFileRow(**row) if row else None


async def delete(conn: Conn, file_id: UUID) -> None:
    await conn.execute("DELETE FROM eval_case_files WHERE id = %s", [file_id])


async def keys_of_case(conn: Conn, case_id: UUID) -> list[str]:
    """The object keys of the case's files (deleted with it: the caller deletes the objects once it commits)."""
    cur = await conn.execute("SELECT object_key FROM eval_case_files WHERE case_id = %s", [case_id])
    return [row["object_key"] for row in await cur.fetchall()]


async def keys_of_dataset(conn: Conn, dataset_id: UUID) -> list[str]:
    """The object keys of the files of every case of the dataset."""
    cur = await conn.execute(
        "SELECT f.object_key FROM eval_case_files f JOIN eval_cases c ON c.id = f.case_id WHERE c.dataset_id = %s",
        [dataset_id],
    )
    return [row["object_key"] for row in await cur.fetchall()]
