"""Workflow schedules (`workflow_schedules`): one per workflow, with its next and last fire times. Every call
runs inside the caller's org transaction (RLS). A read returns a typed row (a frozen dataclass), never a dict."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.db.pool import Conn


@dataclass(frozen=True)
class Schedule:
    """The schedule as a workflow shows it."""

    expression: str
    timezone: str
    enabled: bool
    next_fire_at: datetime | None
    last_fired_at: datetime | None


@dataclass(frozen=True)
class DueSchedule:
    """An enabled schedule that is due: what computes its following fire time."""

    expression: str
    timezone: str
    anchor_at: datetime
    next_fire_at: datetime


async def put(
    conn: Conn,
    org_id: UUID,
    workflow_id: UUID,
    expression: str,
    timezone: str,
    enabled: bool,
    anchor_at: datetime,
    next_fire_at: datetime | None,
) -> None:
    """Create or replace the workflow's schedule."""
    await conn.execute(
        "INSERT INTO workflow_schedules (workflow_id, org_id, expression, timezone, enabled, anchor_at, next_fire_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (workflow_id) DO UPDATE SET expression = EXCLUDED.expression,"
        " timezone = EXCLUDED.timezone, enabled = EXCLUDED.enabled, anchor_at = EXCLUDED.anchor_at,"
        " next_fire_at = EXCLUDED.next_fire_at, updated_at = now()",
        [workflow_id, org_id, expression, timezone, enabled, anchor_at, next_fire_at],
    )


async def delete(conn: Conn, workflow_id: UUID) -> None:
    await conn.execute("DELETE FROM workflow_schedules WHERE workflow_id = %s", [workflow_id])


async def get(conn: Conn, workflow_id: UUID) -> Schedule | None:
    """The schedule as a workflow shows it (None when the workflow has none)."""
    cur = await conn.execute(
        "SELECT expression, timezone, enabled, next_fire_at, last_fired_at FROM workflow_schedules"
        " WHERE workflow_id = %s",
        [workflow_id],
    )
    row = await cur.fetchone()
    return Schedule(**row) if row is not None else None


async def lock_due(conn: Conn, workflow_id: UUID, now: datetime) -> DueSchedule | None:
    """The enabled schedule's expression, timezone, anchor and next fire time, locked, when it is due at `now`;
    None when it is not due or another scheduler holds it."""
    cur = await conn.execute(
        "SELECT expression, timezone, anchor_at, next_fire_at FROM workflow_schedules"
        " WHERE workflow_id = %s AND enabled AND next_fire_at <= %s FOR UPDATE SKIP LOCKED",
        [workflow_id, now],
    )
    row = await cur.fetchone()
    return DueSchedule(**row) if row is not None else None


async def set_next_fire(conn: Conn, workflow_id: UUID, next_fire_at: datetime | None) -> None:
    """Move the schedule on (None: it never fires again)."""
    await conn.execute(
        "UPDATE workflow_schedules SET next_fire_at = %s WHERE workflow_id = %s", [next_fire_at, workflow_id]
    )


async def mark_fired(conn: Conn, workflow_id: UUID, scheduled: datetime) -> None:
    """Record a fire time (a late, older fire never moves `last_fired_at` back)."""
    await conn.execute(
        "UPDATE workflow_schedules SET last_fired_at = greatest(last_fired_at, %s) WHERE workflow_id = %s",
        [scheduled, workflow_id],
    )
