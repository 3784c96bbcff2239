"""Monthly USD caps per user, org and platform; the most specific cap that exists applies. Checked
before a run starts and before every model request inside a run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import AppError
from personal_agent.settings import get_settings


class BudgetExceeded(AppError):
    status = 429
    code = "budget_exceeded"


@dataclass(frozen=True)
class Cap:
    scope: str
    monthly_usd: Decimal
    spent_usd: Decimal

    @property
    def exceeded(self) -> bool:
        return self.spent_usd >= self.monthly_usd


def month_start(now: datetime | None = None) -> datetime:
    now = now or datetime.now(UTC)
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


async def _spent(conn: Conn, since: datetime, user_id: UUID | None) -> Decimal:
    if user_id is None:
        cur = await conn.execute(
            "SELECT coalesce(sum(cost_usd), 0) AS s FROM usage_records WHERE created_at >= %s", [since]
        )
    else:
        cur = await conn.execute(
            "SELECT coalesce(sum(cost_usd), 0) AS s FROM usage_records WHERE created_at >= %s AND user_id = %s",
            [since, user_id],
        )
    row = await cur.fetchone()
    return Decimal(row["s"]) if row else Decimal(0)


async def applicable_cap(org_id: UUID, user_id: UUID | None) -> Cap | None:
    """The user's cap if set, else the org's, else the platform's (spend summed over the matching scope)."""
    since = month_start()
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            "SELECT scope, user_id, monthly_usd FROM budgets WHERE scope = 'org' OR (scope = 'user' AND user_id = %s)",
            [user_id],
        )
        rows = {r["scope"]: r for r in await cur.fetchall()}
        if "user" in rows and user_id is not None:
            return Cap("user", Decimal(rows["user"]["monthly_usd"]), await _spent(conn, since, user_id))
        if "org" in rows:
            return Cap("org", Decimal(rows["org"]["monthly_usd"]), await _spent(conn, since, None))
        platform = get_settings().platform_monthly_budget_usd
        if platform is not None:
            cur = await conn.execute("SELECT pa_platform_spend_since(%s) AS s", [since])
            row = await cur.fetchone()
            return Cap("platform", Decimal(str(platform)), Decimal(row["s"]) if row else Decimal(0))
    return None


def _raise(cap: Cap) -> None:
    raise BudgetExceeded(
        f"the {cap.scope} budget of ${cap.monthly_usd:.2f} this month is spent (${cap.spent_usd:.4f})",
        cap=cap.scope,
        monthly_usd=float(cap.monthly_usd),
        spent_usd=float(cap.spent_usd),
    )


async def check_launch_budget(org_id: UUID, user_id: UUID | None) -> None:
    """Before a run starts: 429 `budget_exceeded` naming the cap."""
    cap = await applicable_cap(org_id, user_id)
    if cap is not None and cap.exceeded:
        _raise(cap)


async def check_run_budget(org_id: UUID, user_id: UUID | None) -> None:
    """Before each model request of a running run (the engine turns this into RUN_ERROR `budget_exceeded`)."""
    await check_launch_budget(org_id, user_id)


async def set_budget(org_id: UUID, scope: str, user_id: UUID | None, monthly_usd: Decimal) -> dict[str, Any]:
    async with org_transaction(org_id) as conn:
        await conn.execute("DELETE FROM budgets WHERE scope = %s AND user_id IS NOT DISTINCT FROM %s", [scope, user_id])
        cur = await conn.execute(
            "INSERT INTO budgets (org_id, scope, user_id, monthly_usd) VALUES (%s, %s, %s, %s)"
            " RETURNING id, scope, user_id, monthly_usd, created_at",
            [org_id, scope, user_id, monthly_usd],
        )
        row = await cur.fetchone()
    assert row is not None
    return row


async def list_budgets(org_id: UUID) -> list[dict[str, Any]]:
    async with org_transaction(org_id) as conn:
        cur = await conn.execute("SELECT id, scope, user_id, monthly_usd, created_at FROM budgets ORDER BY scope")
        return await cur.fetchall()


async def delete_budget(org_id: UUID, budget_id: UUID) -> bool:
    async with org_transaction(org_id) as conn:
        cur = await conn.execute("DELETE FROM budgets WHERE id = %s RETURNING id", [budget_id])
        return await cur.fetchone() is not None
