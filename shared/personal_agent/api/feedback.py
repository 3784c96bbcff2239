"""Feedback on answers: rate a run's answer (thumbs up or down, a comment), read your rating, and (org admins) the
org's ratings with the satisfaction per agent version and model."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal, OrgAdmin
from personal_agent.evals import feedback as service
from personal_agent.evals.feedback_store import FeedbackFilter

router = APIRouter(prefix="/api/v1", tags=["feedback"])


class FeedbackIn(BaseModel):
    rating: Literal[1, -1] = Field(description="1: thumbs up, -1: thumbs down")
    comment: str = Field("", max_length=service.MAX_COMMENT)


class FeedbackOut(BaseModel):
    run_id: UUID
    user_id: UUID
    rating: int
    comment: str
    agent_slug: str | None = Field(description="the agent the answer came from (as the run launched)")
    agent_version: int | None
    model: str | None = Field(description="the model that answered")
    created_at: datetime
    updated_at: datetime


class MyFeedback(BaseModel):
    feedback: FeedbackOut | None = Field(description="the caller's rating of the answer; null when none")


class SatisfactionOut(BaseModel):
    agent_slug: str | None
    agent_version: int | None
    model: str | None
    up: int
    down: int
    satisfaction: float | None = Field(description="the share of thumbs up, 0 to 1")


class FeedbackList(BaseModel):
    items: list[FeedbackOut]
    satisfaction: list[SatisfactionOut] = Field(description="per agent version and model, over the same filters")


@router.post("/runs/{run_id}/feedback", operation_id="rate_run", response_model=FeedbackOut)
async def rate_run(run_id: UUID, body: FeedbackIn, principal: CurrentPrincipal) -> dict[str, Any]:
    """Rate the run's answer; a second rating by the same person replaces the first."""
    return await service.rate(principal, run_id, body.rating, body.comment)


@router.get("/runs/{run_id}/feedback", operation_id="get_run_feedback", response_model=MyFeedback)
async def get_run_feedback(run_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """The caller's rating of the run's answer."""
    return {"feedback": await service.my_rating(principal, run_id)}


@router.get("/feedback", operation_id="list_feedback", response_model=FeedbackList)
async def list_feedback(
    principal: OrgAdmin,
    agent: Annotated[str | None, Query(max_length=200, description="an agent's slug")] = None,
    model: Annotated[str | None, Query(max_length=200)] = None,
    rating: Annotated[int | None, Query(ge=-1, le=1, description="1 or -1")] = None,
    start: Annotated[datetime | None, Query(alias="from")] = None,
    end: Annotated[datetime | None, Query(alias="to")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    """The org's ratings in [from, to), newest first, with the satisfaction per agent version and model."""
    flt = FeedbackFilter(agent=agent, model=model, rating=rating, since=start, until=end)
    return await service.org_feedback(principal, flt, limit)
