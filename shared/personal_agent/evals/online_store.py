"""The SQL of `online_scores`: a sampled production run, its judge's run and the score it gave. Runs inside an org
transaction (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from uuid import UUID

from personal_agent.db.pool import Conn


@dataclass(frozen=True)
class DayScore:
    """One agent's sampled runs on one day (UTC): how many were judged, their mean score, what judging cost."""

    agent_slug: str
    day: date
    sampled: int
    scored: int
    mean_score: float | None
    cost_usd: Decimal


async def add(conn: Conn, org_id: UUID, run_id: UUID, agent: tuple[str, int | None], model: str | None) -> bool:
    """Record a sampled run (once: a repeated pointer finds it); whether it is new."""
    cur = await conn.execute(
        "INSERT INTO online_scores (run_id, org_id, agent_slug, agent_version, model) VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (run_id) DO NOTHING",
        [run_id, org_id, agent[0], agent[1], model],
    )
    return cur.rowcount > 0


async def judging(conn: Conn, run_id: UUID, judge_run_id: UUID) -> None:
    await conn.execute("UPDATE online_scores SET judge_run_id = %s WHERE run_id = %s", [judge_run_id, run_id])


async def finish(conn: Conn, run_id: UUID, status: str, score: float | None, cost: Decimal) -> None:
    await conn.execute(
        "UPDATE online_scores SET status = %s, score = %s, cost_usd = %s, scored_at = now() WHERE run_id = %s",
        [status, score, cost, run_id],
    )


async def judged_run(conn: Conn, judge_run_id: UUID) -> UUID | None:
    """The sampled run a judge's run judges (still judging); None for another run."""
    cur = await conn.execute(
        "SELECT run_id FROM online_scores WHERE judge_run_id = %s AND status = 'judging'", [judge_run_id]
    )
    row = await cur.fetchone()
    return row["run_id"] if row else None


async def by_day(conn: Conn, days: int) -> list[DayScore]:
    """Per agent and day (UTC), the last `days` days, newest first."""
    cur = await conn.execute(
        "SELECT agent_slug, (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS sampled,"
        " count(*) FILTER (WHERE status = 'scored') AS scored, avg(score) AS mean_score,"
        " coalesce(sum(cost_usd), 0) AS cost_usd FROM online_scores"
        " WHERE created_at >= now() - make_interval(days => %s)"
        " GROUP BY agent_slug, day ORDER BY day DESC, agent_slug",
        [days],
    )
    return [DayScore(**row) for row in await cur.fetchall()]
