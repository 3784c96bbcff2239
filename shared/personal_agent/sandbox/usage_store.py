"""SQL of `sandbox_usage` (migration 0031): the sandbox seconds each call held, metered per org; and the org's
`code_execution` choice (`org_settings`, written by the governance settings store)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from uuid import UUID

from personal_agent.db.pool import Conn


async def record(
    conn: Conn,
    org_id: UUID,
    user_id: UUID | None,
    chat_id: UUID | None,
    run_id: UUID,
    backend: str,
    seconds: float,
) -> None:
    """Append the call's row (in the caller's org transaction)."""
    await conn.execute(
        "INSERT INTO sandbox_usage (org_id, user_id, chat_id, run_id, backend, seconds)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        [org_id, user_id, chat_id, run_id, backend, round(Decimal(seconds), 3)],
    )


async def run_seconds(conn: Conn, run_id: UUID) -> float:
    """The sandbox seconds the run used so far."""
    cur = await conn.execute("SELECT coalesce(sum(seconds), 0) AS s FROM sandbox_usage WHERE run_id = %s", [run_id])
    row = await cur.fetchone()
    return float(row["s"]) if row else 0.0


async def org_choice(conn: Conn, org_id: UUID) -> bool | None:
    """The org's `code_execution` setting (None: it has not chosen; the deployment's default applies)."""
    cur = await conn.execute("SELECT code_execution FROM org_settings WHERE org_id = %s", [org_id])
    row = await cur.fetchone()
    return row["code_execution"] if row else None


async def window_seconds(conn: Conn, start: datetime, end: datetime, user_id: UUID | None) -> float:
    """The sandbox seconds in [start, end): the org's (the transaction's org), or one user's."""
    sql = "SELECT coalesce(sum(seconds), 0) AS s FROM sandbox_usage WHERE created_at >= %s AND created_at < %s"
    params: list[object] = [start, end]
    if user_id is not None:
        sql += " AND user_id = %s"
        params.append(user_id)
    cur = await conn.execute(sql, params)
    row = await cur.fetchone()
    return float(row["s"]) if row else 0.0
