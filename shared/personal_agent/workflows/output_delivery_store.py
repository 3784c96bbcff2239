"""The outputs' delivery log (`workflow_output_deliveries`): one row per output and event, with its attempts,
last error and status. Every call runs inside an org transaction (RLS). A read returns a typed row (a frozen
dataclass), never a dict."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb

PUBLIC = (
    "d.id, d.workflow_id, d.output_id, o.kind AS output_kind, o.target_hint, d.event, d.event_key, d.run_id,"
    " d.status, d.attempts, d.last_error, d.last_status_code, d.next_attempt_at, d.delivered_at, d.created_at,"
    " d.updated_at"
)
_FROM = "workflow_output_deliveries d JOIN workflow_outputs o ON o.id = d.output_id"


@dataclass(frozen=True)
class OutputDelivery:
    """A delivery as the log shows it, with its output's kind and hint."""

    id: UUID
    workflow_id: UUID
    output_id: UUID
    output_kind: str
    target_hint: str
    event: str
    event_key: str
    run_id: UUID | None
    status: str
    attempts: int
    last_error: str | None
    last_status_code: int | None
    next_attempt_at: datetime | None
    delivered_at: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class TakenDelivery:
    """A delivery locked for one attempt, with the payload to send."""

    id: UUID
    org_id: UUID
    workflow_id: UUID
    output_id: UUID
    event: str
    event_key: str
    payload: dict[str, Any]
    status: str
    attempts: int


async def add(
    conn: Conn,
    org_id: UUID,
    workflow_id: UUID,
    output_id: UUID,
    event: str,
    event_key: str,
    run_id: UUID | None,
    payload: dict[str, Any],
) -> UUID | None:
    """A new delivery; None when this output already has one for the event (a repeated queue message)."""
    cur = await conn.execute(
        "INSERT INTO workflow_output_deliveries (org_id, workflow_id, output_id, event, event_key, run_id, payload)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (output_id, event, event_key) DO NOTHING RETURNING id",
        [org_id, workflow_id, output_id, event, event_key, run_id, jsonb(payload)],
    )
    row = await cur.fetchone()
    return UUID(str(row["id"])) if row else None


async def take(conn: Conn, delivery_id: UUID) -> TakenDelivery | None:
    """The delivery with its payload, locked for one attempt (None when gone)."""
    cur = await conn.execute(
        "SELECT id, org_id, workflow_id, output_id, event, event_key, payload, status, attempts"
        " FROM workflow_output_deliveries WHERE id = %s FOR UPDATE",
        [delivery_id],
    )
    row = await cur.fetchone()
    return TakenDelivery(**row) if row is not None else None


async def record_attempt(
    conn: Conn,
    delivery_id: UUID,
    status: str,
    error: str | None,
    status_code: int | None,
    next_attempt_at: datetime | None,
) -> None:
    await conn.execute(
        "UPDATE workflow_output_deliveries SET attempts = attempts + 1, status = %s, last_error = %s,"
        " last_status_code = %s, next_attempt_at = %s,"
        " delivered_at = CASE WHEN %s = 'succeeded' THEN now() ELSE delivered_at END, updated_at = now()"
        " WHERE id = %s",
        [status, error, status_code, next_attempt_at, status, delivery_id],
    )


async def restart(conn: Conn, workflow_id: UUID, delivery_id: UUID) -> bool:
    """Start a delivery's attempts again (a redelivery); False when the workflow has no such delivery."""
    cur = await conn.execute(
        "UPDATE workflow_output_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(),"
        " updated_at = now() WHERE id = %s AND workflow_id = %s RETURNING id",
        [delivery_id, workflow_id],
    )
    return await cur.fetchone() is not None


async def get(conn: Conn, workflow_id: UUID, delivery_id: UUID) -> OutputDelivery | None:
    cur = await conn.execute(
        f"SELECT {PUBLIC} FROM {_FROM} WHERE d.id = %s AND d.workflow_id = %s", [delivery_id, workflow_id]
    )
    row = await cur.fetchone()
    return OutputDelivery(**row) if row is not None else None


async def page(conn: Conn, workflow_id: UUID, before: tuple[datetime, UUID] | None, limit: int) -> list[OutputDelivery]:
    """The workflow's deliveries, newest first, after the keyset `before`."""
    keyset = " AND (d.created_at, d.id) < (%s, %s)" if before else ""
    cur = await conn.execute(
        f"SELECT {PUBLIC} FROM {_FROM} WHERE d.workflow_id = %s{keyset} ORDER BY d.created_at DESC, d.id DESC LIMIT %s",
        [workflow_id, *(before or ()), limit],
    )
    return [OutputDelivery(**row) for row in await cur.fetchall()]
