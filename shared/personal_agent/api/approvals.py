"""Approvals: the caller's pending tool calls, and deciding one (approve or deny, with a reason).

Edited `arguments` are at most `MAX_ARGUMENTS_BYTES` of JSON (413 `arguments_too_large`) and nest at most
`MAX_ARGUMENTS_DEPTH` deep (422 `arguments_too_deep`): they become a tool call in the run's history, so they are
held to what a model's own call could be. Both are checked before anything is stored.
"""

from __future__ import annotations

import json
from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.approvals.store import ApprovalRow
from personal_agent.errors import AppError, InvalidInput
from personal_agent.lifecycle import approval_decisions as approvals

router = APIRouter(prefix="/api/v1/approvals", tags=["approvals"])

MAX_ARGUMENTS_BYTES = 64 * 1024
MAX_ARGUMENTS_DEPTH = 32


class DecisionIn(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"decision": "approve"},
                {"decision": "deny", "reason": "not this recipient"},
                {"decision": "approve", "arguments": {"to": "team@example.com"}},
            ]
        }
    )

    decision: Literal["approve", "deny"]
    reason: str | None = Field(None, max_length=2000)
    arguments: dict[str, Any] | None = Field(None, description="edited arguments (with `approve` only)")


class Approver(BaseModel):
    id: str
    name: str | None


class Approval(BaseModel):
    id: str
    run_id: str
    chat_id: str | None
    tool: str
    tool_call_id: str
    args: Any
    status: Literal["pending", "approved", "denied", "expired"]
    reason: str | None
    edited_args: Any
    decided_by: str | None
    decided_at: str | None
    expires_at: str
    created_at: str
    quorum: int = Field(description="how many people must approve (2: neither may be the person whose run asked)")
    approved_by: list[Approver] = Field(description="who approved so far, in order, while a quorum gathers")


class ApprovalList(BaseModel):
    items: list[Approval]


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in `value` (iterative: no recursion on hostile input)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_ARGUMENTS_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def check_arguments(arguments: dict[str, Any] | None) -> None:
    """Refuse edited arguments that are too deep or too large (before anything is stored)."""
    if arguments is None:
        return
    if _depth(arguments) > MAX_ARGUMENTS_DEPTH:
        raise InvalidInput(
            f"the edited arguments nest deeper than {MAX_ARGUMENTS_DEPTH} levels",
            code="arguments_too_deep",
            limit=MAX_ARGUMENTS_DEPTH,
        )
    size = len(json.dumps(arguments, ensure_ascii=False).encode())
    if size > MAX_ARGUMENTS_BYTES:
        raise AppError(
            f"the edited arguments are {size} bytes of JSON; at most {MAX_ARGUMENTS_BYTES} are allowed",
            code="arguments_too_large",
            status=413,
            limit=MAX_ARGUMENTS_BYTES,
        )


def _view(row: ApprovalRow, names: dict[UUID, str]) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "run_id": str(row.run_id),
        "chat_id": str(row.chat_id) if row.chat_id else None,
        "tool": row.tool_name,
        "tool_call_id": row.tool_call_id,
        "args": row.args,
        "status": row.status,
        "reason": row.reason,
        "edited_args": row.edited_args,
        "decided_by": str(row.decided_by) if row.decided_by else None,
        "decided_at": row.decided_at.isoformat() if row.decided_at else None,
        "expires_at": row.expires_at.isoformat(),
        "created_at": row.created_at.isoformat(),
        "quorum": row.quorum,
        "approved_by": [{"id": str(user), "name": names.get(user)} for user in row.approvers],
    }


@router.get("", operation_id="list_approvals", response_model=ApprovalList)
async def list_approvals(
    principal: CurrentPrincipal, status: Literal["pending", "approved", "denied", "expired"] | None = "pending"
) -> dict[str, Any]:
    """Approvals waiting on the caller (all of the org's for org admins)."""
    rows = await approvals.list_approvals(principal, status)
    names = await approvals.approver_names(principal.org_id, rows)
    return {"items": [_view(r, names) for r in rows]}


@router.post("/{approval_id}", operation_id="decide_approval", response_model=Approval)
async def decide_approval(approval_id: UUID, body: DecisionIn, principal: CurrentPrincipal) -> dict[str, Any]:
    """Approve (optionally with edited arguments) or deny; 409 when already decided or expired."""
    check_arguments(body.arguments)
    row = await approvals.decide(principal, approval_id, body.decision, body.reason, body.arguments)
    return _view(row, await approvals.approver_names(principal.org_id, [row]))
