"""Feedback on answers: a person rates a run they may see (theirs, or any of the org's for admins); admins list
the org's ratings and the satisfaction per agent version and model."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.evals import feedback_store as store
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.run_views import visible_run
from personal_agent.models.answered import answered_model_id, stored_refs
from personal_agent.runs import store as run_store

MAX_COMMENT = 2000


async def rate(principal: Principal, run_id: UUID, rating: int, comment: str) -> dict[str, Any]:
    """Store (or change) the caller's rating of the run's answer; 404 `run_not_found` for a run they cannot see."""
    if rating not in (1, -1):
        raise InvalidInput("rating is 1 (thumbs up) or -1 (thumbs down)", code="invalid_rating")
    if len(comment) > MAX_COMMENT:
        raise InvalidInput(f"a comment has at most {MAX_COMMENT} characters", code="comment_too_long")
    return await _store(principal, await visible_run(principal, run_id), rating, comment)


async def rate_seen(principal: Principal, run_id: UUID, rating: int) -> dict[str, Any] | None:
    """A channel member's reaction to an answer the agent posted where they saw it (a Slack thread, a Telegram
    chat): their rating of its run, whoever started it; None when the run is gone."""
    async with org_transaction(principal.org_id) as conn:
        run = await run_store.get_run(conn, run_id)
    return None if run is None else await _store(principal, run, rating, "")


async def take_back(principal: Principal, run_id: UUID, rating: int) -> bool:
    """A reaction taken back: the member's rating of the run goes if it is still that one; whether it went."""
    async with org_transaction(principal.org_id) as conn:
        return await store.delete(conn, run_id, principal.user_id, rating)


async def _store(principal: Principal, run: run_store.RunRow, rating: int, comment: str) -> dict[str, Any]:
    agent = (run.spec or {}).get("agent") or {}
    model = answered_model_id(stored_refs(run.spec), run.answered_model) or run.model_name
    async with org_transaction(principal.org_id) as conn:
        row = await store.upsert(
            conn,
            principal.org_id,
            run.id,
            principal.user_id,
            rating,
            comment.strip(),
            (agent.get("slug"), agent.get("version")),
            model,
        )
    return asdict(row)


async def my_rating(principal: Principal, run_id: UUID) -> dict[str, Any] | None:
    await visible_run(principal, run_id)
    async with org_transaction(principal.org_id) as conn:
        row = await store.mine(conn, run_id, principal.user_id)
    return asdict(row) if row else None


async def org_feedback(principal: Principal, flt: store.FeedbackFilter, limit: int) -> dict[str, Any]:
    """The org's ratings, newest first, and the satisfaction (share of thumbs up) per agent version and model."""
    if flt.rating not in (None, 1, -1):
        raise InvalidInput("rating is 1 (thumbs up) or -1 (thumbs down)", code="invalid_rating")
    async with org_transaction(principal.org_id) as conn:
        rows = await store.listed(conn, flt, limit)
        groups = await store.satisfaction(conn, flt)
    return {
        "items": [asdict(row) for row in rows],
        "satisfaction": [
            {**asdict(group), "satisfaction": group.up / (group.up + group.down) if group.up + group.down else None}
            for group in groups
        ],
    }
