"""Monthly USD caps per user, org and platform. Every cap that applies is checked and the most restrictive
one decides (an org cap never lifts the platform's, a user cap never lifts the org's).

A cap is measured against committed spend: the ledger this month plus the live reservations of requests
in flight. Before a run starts, and before each of its model requests, a spent cap refuses with 429
`budget_exceeded`. Before each request the engine also reserves the request's estimated cost
(`governance.pricing`) under an advisory lock, so concurrent runs see each other's requests: together they
overspend a cap by at most one request. Recording the response's usage settles the reservation; a run
that ends releases it; a dead worker's stops counting after `PA_BUDGET_RESERVATION_TTL_SECONDS`.

Unpriced usage (a model neither an admin price nor genai-prices can price) is never free under a cap: it
counts at `PA_BUDGET_UNPRICED_USD_PER_MTOK` per million input and output tokens, and its requests reserve
at that rate. The ledger still records its cost as unknown (NULL); an admin price on the model replaces
the conservative rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import AppError, NotFound
from personal_agent.governance import budget_store, reservation_store
from personal_agent.settings import get_settings

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

    from personal_agent.spec.run_spec import ModelRef, RunSpec


class BudgetExceeded(AppError):
    status = 429
    code = "budget_exceeded"


@dataclass(frozen=True)
class Cap:
    scope: str
    monthly_usd: Decimal
    spent_usd: Decimal  # committed: the ledger this month plus live reservations

    @property
    def exceeded(self) -> bool:
        return self.spent_usd >= self.monthly_usd

    @property
    def headroom(self) -> Decimal:
        return self.monthly_usd - self.spent_usd


def month_start(now: datetime | None = None) -> datetime:
    now = now or datetime.now(UTC)
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


async def _cap_rows(conn: Conn, user_id: UUID | None) -> dict[str, Decimal]:
    """The monthly limit of every cap that applies, by scope."""
    cur = await conn.execute(
        "SELECT scope, monthly_usd FROM budgets WHERE scope = 'org' OR (scope = 'user' AND user_id = %s)", [user_id]
    )
    rows = {r["scope"]: Decimal(r["monthly_usd"]) for r in await cur.fetchall()}
    platform = get_settings().platform_monthly_budget_usd
    if platform is not None:
        rows["platform"] = Decimal(str(platform))
    return rows


async def _caps(
    conn: Conn, limits: dict[str, Decimal], user_id: UUID | None, own: tuple[UUID, int] | None = None
) -> list[Cap]:
    """Every applicable cap with its committed spend (one's own pending reservation left out)."""
    from personal_agent.governance.pricing import unpriced_rate

    since, rate = month_start(), unpriced_rate()
    caps = []
    for scope, monthly in limits.items():
        if scope == "platform":
            spent = await reservation_store.platform_committed(conn, since, rate, own)
        else:
            spent = await reservation_store.committed(conn, since, rate, user_id if scope == "user" else None, own)
        caps.append(Cap(scope, monthly, spent))
    return caps


def most_restrictive(caps: Sequence[Cap]) -> Cap | None:
    """The cap with the least headroom left (a spent one when any is)."""
    return min(caps, key=lambda c: c.headroom, default=None)


def _raise(cap: Cap) -> None:
    raise BudgetExceeded(
        f"the {cap.scope} budget of ${cap.monthly_usd:.2f} this month is spent (${cap.spent_usd:.4f})",
        cap=cap.scope,
        monthly_usd=float(cap.monthly_usd),
        spent_usd=float(cap.spent_usd),
    )


async def check_launch_budget(conn: Conn, user_id: UUID | None) -> None:
    """Before a run starts (in the launch's org transaction): 429 `budget_exceeded` naming the cap."""
    cap = most_restrictive(await _caps(conn, await _cap_rows(conn, user_id), user_id))
    if cap is not None and cap.exceeded:
        _raise(cap)


async def reserve_request(
    spec: RunSpec,
    request_index: int,
    messages: Sequence[ModelMessage],
    models: tuple[ModelRef, ...] | None = None,
) -> None:
    """Before each model request of a running run (the router's too, to `models`): refuse when a cap is spent
    (the engine turns this into RUN_ERROR `budget_exceeded`), else hold the request's estimated cost until its
    usage is recorded."""
    settings = get_settings()
    async with org_transaction(spec.org_id) as conn:
        limits = await _cap_rows(conn, spec.user_id)
        if not limits:
            return
        await reservation_store.lock(conn, spec.org_id, platform="platform" in limits)
        cap = most_restrictive(await _caps(conn, limits, spec.user_id, (spec.run_id, request_index)))
        if cap is not None and cap.exceeded:
            _raise(cap)
        from personal_agent.governance.pricing import request_estimate

        amount = request_estimate(spec, messages, models)
        await reservation_store.hold(
            conn, spec.org_id, spec.run_id, request_index, spec.user_id, amount, settings.budget_reservation_ttl_seconds
        )


async def set_budget(org_id: UUID, scope: str, user_id: UUID | None, monthly_usd: Decimal) -> dict[str, Any]:
    """Replace the org's cap, or a member's (404 `user_not_found` for anyone who is not a member)."""
    async with org_transaction(org_id) as conn:
        if user_id is not None:
            cur = await conn.execute("SELECT 1 FROM memberships WHERE org_id = %s AND user_id = %s", [org_id, user_id])
            if await cur.fetchone() is None:
                raise NotFound("no member of this org has that user id", code="user_not_found")
        return await budget_store.replace(conn, org_id, scope, user_id, monthly_usd)


async def list_budgets(org_id: UUID) -> list[dict[str, Any]]:
    async with org_transaction(org_id) as conn:
        return await budget_store.list_all(conn)


async def delete_budget(org_id: UUID, budget_id: UUID) -> bool:
    async with org_transaction(org_id) as conn:
        return await budget_store.delete(conn, budget_id)


async def spend_by_budget(org_id: UUID) -> list[dict[str, Any]]:
    """Every cap of the org with what counts against it this month (spend plus live reservations)."""
    from personal_agent.governance.pricing import unpriced_rate

    since, rate = month_start(), unpriced_rate()
    async with org_transaction(org_id) as conn:
        budgets = await budget_store.list_all(conn)
        for row in budgets:
            user = row["user_id"] if row["scope"] == "user" else None
            row["spent_usd"] = await reservation_store.committed(conn, since, rate, user)
            row["month_start"] = since
    return budgets
