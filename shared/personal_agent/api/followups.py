"""Follow-ups while a run is active: a chat's policy for a message sent while one of its runs has not ended
(`reject`, `enqueue` (the default) or `interrupt`; `lifecycle/followup_queue.py`), its queued messages, and
cancelling one before it starts. A queued message is what `POST /chats/{id}/runs` (or its stream, `/mcp`, a webhook)
answered 202 `followup_queued` for."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.chats.followup_store import FollowUpRow
from personal_agent.lifecycle import followup_queue

router = APIRouter(prefix="/api/v1/chats", tags=["chats"])
PolicyName = Literal["reject", "enqueue", "interrupt"]


class FollowUpPolicy(BaseModel):
    policy: PolicyName = Field(
        description="`reject`: 409 `run_in_progress`; `enqueue`: queued, starts when the run ends; `interrupt`: "
        "queued, and the run is stopped at its next safe point (its partial answer kept)"
    )


class FollowUp(BaseModel):
    id: str
    run_id: str = Field(description="the run it starts as (its events and status once it started)")
    message: str
    source: str
    status: Literal["queued", "started", "cancelled", "failed"]
    error: dict[str, Any] | None
    created_at: str


class FollowUpList(BaseModel):
    items: list[FollowUp] = Field(description="queued, in the order they start")


def _view(row: FollowUpRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "run_id": str(row.run_id),
        "message": row.message,
        "source": row.source,
        "status": row.status,
        "error": row.error,
        "created_at": row.created_at.isoformat(),
    }


@router.get("/{chat_id}/followup-policy", operation_id="get_followup_policy", response_model=FollowUpPolicy)
async def get_followup_policy(chat_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return {"policy": await followup_queue.policy(principal, chat_id)}


@router.put("/{chat_id}/followup-policy", operation_id="set_followup_policy", response_model=FollowUpPolicy)
async def set_followup_policy(chat_id: UUID, body: FollowUpPolicy, principal: CurrentPrincipal) -> dict[str, Any]:
    return {"policy": await followup_queue.policy(principal, chat_id, body.policy)}


@router.get("/{chat_id}/followups", operation_id="list_followups", response_model=FollowUpList)
async def list_followups(chat_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """The chat's queued messages, in the order they start."""
    return {"items": [_view(row) for row in await followup_queue.queued(principal, chat_id)]}


@router.delete("/{chat_id}/followups/{followup_id}", operation_id="cancel_followup", response_model=FollowUp)
async def cancel_followup(chat_id: UUID, followup_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """Cancel a queued message: it never starts. 409 `followup_not_queued` once it started."""
    return _view(await followup_queue.cancel(principal, chat_id, followup_id))
