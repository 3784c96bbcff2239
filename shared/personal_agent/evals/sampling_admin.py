"""Online sampling for org admins: set (or turn off) an agent's sampling into an LLM judge, list the org's settings,
and the judge's scores per agent and day."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from personal_agent.agents import sampling_store
from personal_agent.agents import service as agents
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.evals import online_store
from personal_agent.identity.principal import Principal

MAX_RUBRIC = 4000


async def set_sampling(principal: Principal, slug: str, rate: float, rubric: str, model: str | None) -> dict[str, Any]:
    """Sample `rate` (0: off) of the agent's production runs from their next launch; 404 `agent_not_found` for an
    agent the admin does not see, 422 `invalid_rate` outside 0 to 1."""
    if not 0 <= rate <= 1:
        raise InvalidInput("rate is a share of runs, from 0 (off) to 1 (every run)", code="invalid_rate")
    if len(rubric) > MAX_RUBRIC:
        raise InvalidInput(f"a rubric has at most {MAX_RUBRIC} characters", code="rubric_too_long")
    async with org_transaction(principal.org_id) as conn:
        agent = await agents.for_launch(conn, principal.org_id, principal.user_id, slug=slug)
        row = await sampling_store.put(conn, principal.org_id, agent.slug, rate, rubric.strip(), model or None)
    return asdict(row)


async def list_sampling(principal: Principal) -> list[dict[str, Any]]:
    async with org_transaction(principal.org_id) as conn:
        return [asdict(row) for row in await sampling_store.listed(conn)]


async def scores_by_day(principal: Principal, days: int) -> list[dict[str, Any]]:
    """Per agent and day (UTC) over the last `days` days: runs sampled, scored, the mean score, what judging cost."""
    async with org_transaction(principal.org_id) as conn:
        rows = await online_store.by_day(conn, days)
    return [{**asdict(row), "cost_usd": float(row.cost_usd)} for row in rows]
