"""The SQL of `run_feedback`: one rating per person and answer (a run), changeable. Runs inside an org
transaction (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = "run_id, user_id, rating, comment, agent_slug, agent_version, model, created_at, updated_at"


@dataclass(frozen=True)
class FeedbackRow:
    run_id: UUID
    user_id: UUID
    rating: int
    comment: str
    agent_slug: str | None
    agent_version: int | None
    model: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Satisfaction:
    """Ratings of one agent version and model: how many up, how many down."""

    agent_slug: str | None
    agent_version: int | None
    model: str | None
    up: int
    down: int


@dataclass(frozen=True)
class FeedbackFilter:
    agent: str | None = None
    model: str | None = None
    rating: int | None = None
    since: datetime | None = None
    until: datetime | None = None


async def upsert(
    conn: Conn,
    org_id: UUID,
    run_id: UUID,
    user_id: UUID,
    rating: int,
    comment: str,
    agent: tuple[str | None, int | None],
    model: str | None,
) -> FeedbackRow:
    cur = await conn.execute(
        "INSERT INTO run_feedback (org_id, run_id, user_id, rating, comment, agent_slug, agent_version, model)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (run_id, user_id) DO UPDATE SET"
        " rating = EXCLUDED.rating, comment = EXCLUDED.comment, updated_at = now()"
        f" RETURNING {COLUMNS}",
        [org_id, run_id, user_id, rating, comment, agent[0], agent[1], model],
    )
    row = await cur.fetchone()
    assert row is not None
    return FeedbackRow(**row)


async def delete(conn: Conn, run_id: UUID, user_id: UUID, rating: int) -> bool:
    """Remove the person's rating of the run if it is `rating`; whether it was."""
    cur = await conn.execute(
        "DELETE FROM run_feedback WHERE run_id = %s AND user_id = %s AND rating = %s", [run_id, user_id, rating]
    )
    return cur.rowcount > 0


async def mine(conn: Conn, run_id: UUID, user_id: UUID) -> FeedbackRow | None:
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM run_feedback WHERE run_id = %s AND user_id = %s", [run_id, user_id]
    )
    row = await cur.fetchone()
    return FeedbackRow(**row) if row else None


def _where(flt: FeedbackFilter) -> tuple[str, list[object]]:
    clauses: list[str] = ["true"]
    args: list[object] = []
    for column, value in (("agent_slug", flt.agent), ("model", flt.model), ("rating", flt.rating)):
        if value is not None:
            clauses.append(f"{column} = %s")
            args.append(value)
    if flt.since is not None:
        clauses.append("updated_at >= %s")
        args.append(flt.since)
    if flt.until is not None:
        clauses.append("updated_at < %s")
        args.append(flt.until)
    return " AND ".join(clauses), args


async def listed(conn: Conn, flt: FeedbackFilter, limit: int) -> list[FeedbackRow]:
    where, args = _where(flt)
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM run_feedback WHERE {where} ORDER BY updated_at DESC LIMIT %s", [*args, limit]
    )
    return [FeedbackRow(**row) for row in await cur.fetchall()]


async def satisfaction(conn: Conn, flt: FeedbackFilter) -> list[Satisfaction]:
    """Up and down counts per agent version and model, most rated first."""
    where, args = _where(flt)
    cur = await conn.execute(
        "SELECT agent_slug, agent_version, model, count(*) FILTER (WHERE rating = 1) AS up,"
        f" count(*) FILTER (WHERE rating = -1) AS down FROM run_feedback WHERE {where}"
        " GROUP BY agent_slug, agent_version, model ORDER BY count(*) DESC, agent_slug, agent_version, model",
        args,
    )
    return [Satisfaction(**row) for row in await cur.fetchall()]
