"""Workflow output rows (`workflow_outputs`): where a workflow's results go. Every call runs inside an org
transaction (RLS); the sealed part (a URL, a signing secret) is read only by the sender. A read returns a typed
row (a frozen dataclass), never a dict."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.workflows.credentials import Sealed

PUBLIC = "id, workflow_id, kind, target_hint, email, events, enabled, created_at"


@dataclass(frozen=True)
class Output:
    """An output as its owner sees it (the sealed part is never in it)."""

    id: UUID
    workflow_id: UUID
    kind: str
    target_hint: str
    email: str | None
    events: list[str]
    enabled: bool
    created_at: datetime


def _output(row: dict[str, Any]) -> Output:
    return Output(**{k: row[k] for k in Output.__dataclass_fields__})


async def insert(
    conn: Conn,
    org_id: UUID,
    workflow_id: UUID,
    kind: str,
    target_hint: str,
    email: str | None,
    sealed: Sealed | None,
    events: list[str],
) -> Output:
    cur = await conn.execute(
        "INSERT INTO workflow_outputs (org_id, workflow_id, kind, target_hint, email, ciphertext, nonce,"
        f" encrypted_data_key, events) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING {PUBLIC}",
        [
            org_id,
            workflow_id,
            kind,
            target_hint,
            email,
            sealed.ciphertext if sealed else None,
            sealed.nonce if sealed else None,
            sealed.encrypted_data_key if sealed else None,
            events,
        ],
    )
    row = await cur.fetchone()
    assert row is not None
    return _output(row)


async def list_for(conn: Conn, workflow_id: UUID, *, enabled_only: bool = False) -> list[Output]:
    only = " AND enabled" if enabled_only else ""
    cur = await conn.execute(
        f"SELECT {PUBLIC} FROM workflow_outputs WHERE workflow_id = %s{only} ORDER BY created_at, id", [workflow_id]
    )
    return [_output(row) for row in await cur.fetchall()]


async def set_enabled(conn: Conn, workflow_id: UUID, output_id: UUID, enabled: bool) -> Output | None:
    cur = await conn.execute(
        f"UPDATE workflow_outputs SET enabled = %s WHERE id = %s AND workflow_id = %s RETURNING {PUBLIC}",
        [enabled, output_id, workflow_id],
    )
    row = await cur.fetchone()
    return _output(row) if row is not None else None


async def delete(conn: Conn, workflow_id: UUID, output_id: UUID) -> bool:
    cur = await conn.execute(
        "DELETE FROM workflow_outputs WHERE id = %s AND workflow_id = %s RETURNING id", [output_id, workflow_id]
    )
    return await cur.fetchone() is not None


async def sealed_target(conn: Conn, output_id: UUID) -> tuple[Output, Sealed | None] | None:
    """The output with its sealed part, for the sender."""
    cur = await conn.execute(
        f"SELECT {PUBLIC}, ciphertext, nonce, encrypted_data_key FROM workflow_outputs WHERE id = %s", [output_id]
    )
    row = await cur.fetchone()
    if row is None:
        return None
    sealed = None
    if row["ciphertext"] is not None:
        key = row["encrypted_data_key"]
        sealed = Sealed(bytes(row["ciphertext"]), bytes(row["nonce"]), bytes(key) if key is not None else None)
    return _output(row), sealed
