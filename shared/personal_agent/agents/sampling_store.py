"""The SQL of `agent_sampling`: the share of an agent's production runs an org samples into an LLM judge (its
rubric, its model). Runs inside an org transaction (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.db.pool import Conn


@dataclass(frozen=True)
class Sampling:
    agent_slug: str
    rate: float
    rubric: str
    model: str | None
    updated_at: datetime


async def put(conn: Conn, org_id: UUID, slug: str, rate: float, rubric: str, model: str | None) -> Sampling:
    cur = await conn.execute(
        "INSERT INTO agent_sampling (org_id, agent_slug, rate, rubric, model) VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (org_id, agent_slug) DO UPDATE SET rate = EXCLUDED.rate, rubric = EXCLUDED.rubric,"
        " model = EXCLUDED.model, updated_at = now() RETURNING agent_slug, rate, rubric, model, updated_at",
        [org_id, slug, rate, rubric, model],
    )
    row = await cur.fetchone()
    assert row is not None
    return Sampling(**row)


async def get(conn: Conn, slug: str) -> Sampling | None:
    cur = await conn.execute(
        "SELECT agent_slug, rate, rubric, model, updated_at FROM agent_sampling WHERE agent_slug = %s", [slug]
    )
    row = await cur.fetchone()
    return Sampling(**row) if row else None


async def listed(conn: Conn) -> list[Sampling]:
    cur = await conn.execute(
        "SELECT agent_slug, rate, rubric, model, updated_at FROM agent_sampling ORDER BY agent_slug"
    )
    return [Sampling(**row) for row in await cur.fetchall()]
