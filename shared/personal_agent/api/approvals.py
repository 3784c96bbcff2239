"""Approvals: the caller's pending tool calls, and deciding one (approve or deny, with a reason)."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal

router = APIRouter(prefix="/api/v1/approvals", tags=["approvals"])


class DecisionIn(BaseModel):
    decision: Literal["approve", "deny"]
    reason: str | None = Field(None, max_length=2000)
    arguments: dict[str, Any] | None = None


def _view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "run_id": str(row["run_id"]),
        "chat_id": str(row["chat_id"]) if row["chat_id"] else None,
        "tool": row["tool_name"],
        "tool_call_id": row["tool_call_id"],
        "args": row["args"],
        "status": row["status"],
        "reason": row["reason"],
        "edited_args": row["edited_args"],
        "decided_by": str(row["decided_by"]) if row["decided_by"] else None,
        "decided_at": row["decided_at"].isoformat() if row["decided_at"] else None,
        "expires_at": row["expires_at"].isoformat(),
        "created_at": row["created_at"].isoformat(),
    }


@router.get("", operation_id="list_approvals")
async def list_approvals(
    principal: CurrentPrincipal, status: Literal["pending", "approved", "denied", "expired"] | None = "pending"
) -> dict[str, Any]:
    """Approvals waiting on the caller (all of the org's for org admins)."""
    from personal_agent.durable.approvals import list_approvals as list_rows

    return {"items": [_view(r) for r in await list_rows(principal, status)]}


@router.post("/{approval_id}", operation_id="decide_approval")
async def decide_approval(approval_id: UUID, body: DecisionIn, principal: CurrentPrincipal) -> dict[str, Any]:
    """Approve (optionally with edited arguments) or deny; 409 when already decided or expired."""
    from personal_agent.durable.approvals import decide

    return _view(await decide(principal, approval_id, body.decision, body.reason, body.arguments))
