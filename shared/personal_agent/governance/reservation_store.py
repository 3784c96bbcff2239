"""Budget reservations (the `budget_reservations` table) and the committed spend a cap is measured against:
the ledger since the start of the month, a response nobody could price counted at the configured
unpriced rate, plus the live reservations of requests still in flight."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from uuid import UUID

from personal_agent.db.pool import Conn

_LOCK_SPACE = 0x7062  # "pb": budget admission locks (pg_advisory_xact_lock(int, int))
_PLATFORM = 0

# One statement, one snapshot: a settlement (reservation out, ledger row in, one transaction) committing in
# between can neither hide a request nor count it twice.
_COMMITTED = (
    "SELECT (SELECT coalesce(sum(coalesce(cost_usd, (input_tokens + output_tokens) * %(rate)s / 1000000)), 0)"
    " FROM usage_records WHERE created_at >= %(since)s{user})"
    " + (SELECT coalesce(sum(amount_usd), 0) FROM budget_reservations WHERE expires_at > now(){user}"
    " AND (run_id, request_index) IS DISTINCT FROM (%(own_run)s::uuid, %(own_index)s::integer)) AS s"
)


async def lock(conn: Conn, org_id: UUID, *, platform: bool) -> None:
    """Serialise admission for the org (and for the platform, first, when a platform cap applies) until commit."""
    if platform:
        await conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_SPACE, _PLATFORM])
    await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [_LOCK_SPACE, str(org_id)])


async def committed(
    conn: Conn, since: datetime, rate: Decimal, user_id: UUID | None, own: tuple[UUID, int] | None = None
) -> Decimal:
    """The org's (or one user's) spend since `since` plus its live reservations, except the caller's own."""
    params = {
        "since": since,
        "rate": rate,
        "user_id": user_id,
        "own_run": own[0] if own else None,
        "own_index": own[1] if own else None,
    }
    sql = _COMMITTED.format(user=" AND user_id = %(user_id)s" if user_id is not None else "")
    cur = await conn.execute(sql, params)
    row = await cur.fetchone()
    return Decimal(row["s"]) if row else Decimal(0)


async def platform_committed(conn: Conn, since: datetime, rate: Decimal, own: tuple[UUID, int] | None) -> Decimal:
    """Every org's spend and live reservations (the only total that crosses tenants)."""
    cur = await conn.execute(
        "SELECT pa_platform_committed(%s, %s, %s, %s) AS s",
        [since, rate, own[0] if own else None, own[1] if own else None],
    )
    row = await cur.fetchone()
    return Decimal(row["s"]) if row else Decimal(0)


async def hold(
    conn: Conn, org_id: UUID, run_id: UUID, request_index: int, user_id: UUID | None, amount: Decimal, ttl: int
) -> None:
    """Reserve `amount` for one request (a retried step refreshes its own reservation)."""
    await conn.execute("DELETE FROM budget_reservations WHERE expires_at <= now()")  # the org's, under RLS
    await conn.execute(
        "INSERT INTO budget_reservations (org_id, run_id, request_index, user_id, amount_usd, expires_at)"
        " VALUES (%s, %s, %s, %s, %s, now() + make_interval(secs => %s))"
        " ON CONFLICT (run_id, request_index) DO UPDATE"
        " SET amount_usd = EXCLUDED.amount_usd, expires_at = EXCLUDED.expires_at",
        [org_id, run_id, request_index, user_id, amount, ttl],
    )


async def settle(conn: Conn, run_id: UUID, request_index: int) -> None:
    """The request's usage is in the ledger (same transaction): its reservation stops counting."""
    await conn.execute(
        "DELETE FROM budget_reservations WHERE run_id = %s AND request_index = %s", [run_id, request_index]
    )
