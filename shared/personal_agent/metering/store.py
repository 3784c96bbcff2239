"""SQL of `metering_exports` (the export ledger) and the cross-org usage sums the exporter reads (migrations 0018,
0049)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from personal_agent.db.pool import Conn, jsonb
from personal_agent.metering.periods import Period, PeriodKind


async def lock_period(conn: Conn, period: Period) -> None:
    """Serialize exporters of the same period until the transaction ends (a redelivery waits, then finds it done)."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtext('pa-metering'), hashtext(%s))", [f"{period.kind}:{period.label}"]
    )


async def is_exported(conn: Conn, period: Period) -> bool:
    cur = await conn.execute(
        "SELECT 1 FROM metering_exports WHERE period_kind = %s AND period_start = %s", [period.kind, period.start]
    )
    return await cur.fetchone() is not None


async def record_export(conn: Conn, period: Period, object_key: str, export_id: str, totals: dict[str, Any]) -> None:
    await conn.execute(
        "INSERT INTO metering_exports (period_kind, period_start, period_end, object_key, export_id, totals)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        [period.kind, period.start, period.end, object_key, export_id, jsonb(totals)],
    )


async def last_exported_end(conn: Conn, kind: PeriodKind) -> datetime | None:
    cur = await conn.execute("SELECT max(period_end) AS e FROM metering_exports WHERE period_kind = %s", [kind])
    row = await cur.fetchone()
    return row["e"] if row else None


async def usage_by_org_and_model(conn: Conn, period: Period) -> list[dict[str, Any]]:
    cur = await conn.execute("SELECT * FROM pa_metering_usage(%s, %s)", [period.start, period.end])
    return list(await cur.fetchall())


async def runs_by_org(conn: Conn, period: Period) -> list[dict[str, Any]]:
    cur = await conn.execute("SELECT * FROM pa_metering_runs(%s, %s)", [period.start, period.end])
    return list(await cur.fetchall())


async def sandbox_by_org(conn: Conn, period: Period) -> list[dict[str, Any]]:
    """The sandbox calls and seconds of each org in the period (`run_python`'s meter)."""
    cur = await conn.execute("SELECT * FROM pa_metering_sandbox(%s, %s)", [period.start, period.end])
    return list(await cur.fetchall())
