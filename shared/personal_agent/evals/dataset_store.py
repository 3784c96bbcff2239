"""The SQL of `eval_datasets` and `eval_cases`. Runs inside an org transaction (RLS). A case's input is a string or
a list of messages (`[{role, content}]`), stored as such in `eval_cases.input` (jsonb)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb

Input = str | list[dict[str, str]]


def encoded_size(value: Input) -> int:
    """How long the input is as stored (its JSON)."""
    return len(json.dumps(value, ensure_ascii=False))


def decode_input(stored: Any) -> Input:
    if isinstance(stored, list):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in stored]
    return str(stored)


def prompt_of(value: Input) -> str:
    """The text a case's run is sent: the input, or its last user message."""
    if isinstance(value, str):
        return value
    return next((m["content"] for m in reversed(value) if m["role"] == "user"), "")


def _case(row: dict[str, Any]) -> CaseRow:
    return CaseRow(**{**row, "input": decode_input(row["input"])})


@dataclass(frozen=True)
class DatasetRow:
    id: UUID
    name: str
    created_at: datetime
    cases: int


@dataclass(frozen=True)
class CaseRow:
    id: UUID
    position: int
    input: Input
    expected: str | None
    criteria: str | None
    tags: list[str]
    source_run_id: UUID | None
    content_tier: int = 0
    untrusted: bool = False


@dataclass(frozen=True)
class NewCase:
    input: Input
    expected: str | None = None
    criteria: str | None = None
    tags: tuple[str, ...] = ()
    source_run_id: UUID | None = None
    content_tier: int = 0
    """The labels of the run it was made from (`spec/labels.py`); a case typed or imported is clean."""
    untrusted: bool = False


async def insert_dataset(conn: Conn, org_id: UUID, name: str, user_id: UUID) -> UUID | None:
    """The new dataset's id; None when the org has one of that name."""
    cur = await conn.execute(
        "INSERT INTO eval_datasets (org_id, name, created_by) VALUES (%s, %s, %s)"
        " ON CONFLICT (org_id, name) DO NOTHING RETURNING id",
        [org_id, name, user_id],
    )
    row = await cur.fetchone()
    return UUID(str(row["id"])) if row else None


async def add_cases(conn: Conn, org_id: UUID, dataset_id: UUID, cases: list[NewCase]) -> list[UUID]:
    """Append cases after the dataset's last; their ids."""
    cur = await conn.execute(
        "SELECT coalesce(max(position) + 1, 0) AS next FROM eval_cases WHERE dataset_id = %s", [dataset_id]
    )
    row = await cur.fetchone()
    start = int(row["next"]) if row else 0
    ids = []
    for offset, case in enumerate(cases):
        added = await conn.execute(
            "INSERT INTO eval_cases (org_id, dataset_id, position, input, expected, criteria, tags, source_run_id,"
            " content_tier, untrusted) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            [
                org_id,
                dataset_id,
                start + offset,
                jsonb(case.input),
                case.expected,
                case.criteria,
                list(case.tags),
                case.source_run_id,
                case.content_tier,
                case.untrusted,
            ],
        )
        inserted = await added.fetchone()
        assert inserted is not None
        ids.append(UUID(str(inserted["id"])))
    return ids


async def get_dataset(conn: Conn, dataset_id: UUID) -> DatasetRow | None:
    cur = await conn.execute(
        "SELECT d.id, d.name, d.created_at, (SELECT count(*) FROM eval_cases c WHERE c.dataset_id = d.id) AS cases"
        " FROM eval_datasets d WHERE d.id = %s",
        [dataset_id],
    )
    row = await cur.fetchone()
    return DatasetRow(**row) if row else None


async def list_datasets(conn: Conn) -> list[DatasetRow]:
    cur = await conn.execute(
        "SELECT d.id, d.name, d.created_at, (SELECT count(*) FROM eval_cases c WHERE c.dataset_id = d.id) AS cases"
        " FROM eval_datasets d ORDER BY d.created_at DESC"
    )
    return [DatasetRow(**row) for row in await cur.fetchall()]


async def cases(conn: Conn, dataset_id: UUID) -> list[CaseRow]:
    cur = await conn.execute(
        "SELECT id, position, input, expected, criteria, tags, source_run_id, content_tier, untrusted FROM eval_cases"
        " WHERE dataset_id = %s ORDER BY position",
        [dataset_id],
    )
    return [_case(row) for row in await cur.fetchall()]


async def get_case(conn: Conn, dataset_id: UUID, case_id: UUID) -> CaseRow | None:
    cur = await conn.execute(
        "SELECT id, position, input, expected, criteria, tags, source_run_id, content_tier, untrusted FROM eval_cases"
        " WHERE id = %s AND dataset_id = %s",
        [case_id, dataset_id],
    )
    row = await cur.fetchone()
    return _case(row) if row else None


async def update_case(conn: Conn, case_id: UUID, case: NewCase) -> None:
    """Replace the case's input, expected answer, criteria and tags (its position, source and labels stay: an edit
    of text that came from a restricted chat does not make it less so)."""
    await conn.execute(
        "UPDATE eval_cases SET input = %s, expected = %s, criteria = %s, tags = %s WHERE id = %s",
        [jsonb(case.input), case.expected, case.criteria, list(case.tags), case_id],
    )


async def delete_case(conn: Conn, case_id: UUID) -> None:
    """Delete the case (its files' rows and its results in past evaluations go with it)."""
    await conn.execute("DELETE FROM eval_cases WHERE id = %s", [case_id])


async def delete_dataset(conn: Conn, dataset_id: UUID) -> bool:
    """Delete the dataset with its cases, their files' rows and its evaluations; False when there is none."""
    cur = await conn.execute("DELETE FROM eval_datasets WHERE id = %s RETURNING id", [dataset_id])
    return await cur.fetchone() is not None
