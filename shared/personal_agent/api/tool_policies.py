"""Tool policies for org admins (ordered rules over a call's arguments, first match wins), their report, and a
chat's review mode for its owner."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal, OrgAdmin
from personal_agent.approvals import policy_report
from personal_agent.governance import tool_policies
from personal_agent.governance.tool_policy_store import PolicyRow
from personal_agent.lifecycle import run_policies
from personal_agent.spec.tool_policy import ReviewMode

router = APIRouter(prefix="/api/v1/admin/tool-policies", tags=["tool-policies"])
chats_router = APIRouter(prefix="/api/v1/chats", tags=["chats"])

Effect = Literal["allow", "ask", "deny"]
WHEN = "CEL over args, user.role, run.trigger, run.tier and run.untrusted, e.g. `args.amount > 500`"


class ToolPolicyIn(BaseModel):
    tool: str = Field(min_length=1, max_length=200, description="a tool's name or a glob (`refund_*`, `*`)")
    when: str = Field("true", min_length=1, max_length=2000, description=WHEN)
    effect: Effect
    reason: str = Field("", max_length=500)
    log_only: bool = Field(False, description="record what it would have done, never enforce it")
    quorum: Literal[1, 2] = Field(1, description="approvers an `ask` needs (2: two people, neither the requester)")
    position: int | None = Field(None, ge=0, description="its place in the order (0: first); left out: last")


class ToolPolicyPatch(BaseModel):
    tool: str | None = Field(None, min_length=1, max_length=200)
    when: str | None = Field(None, min_length=1, max_length=2000)
    effect: Effect | None = None
    reason: str | None = Field(None, max_length=500)
    log_only: bool | None = None
    quorum: Literal[1, 2] | None = None
    position: int | None = Field(None, ge=0, description="move it to this place in the order")


class ToolPolicyOut(BaseModel):
    id: UUID
    position: int
    tool: str
    when: str
    effect: Effect
    reason: str
    log_only: bool
    quorum: int
    created_at: datetime
    updated_at: datetime


class ToolPolicyList(BaseModel):
    items: list[ToolPolicyOut]


class ToolPolicyOrder(BaseModel):
    ids: list[UUID] = Field(max_length=tool_policies.MAX_RULES, description="every rule of the org, in its new order")


class ToolPolicyReportItem(BaseModel):
    rule_id: UUID
    tool: str | None = Field(description="null: the rule was deleted since")
    when: str | None
    effect: Effect | None
    log_only: bool | None
    would_have: dict[str, int] = Field(description="log-only matches by the effect they would have had")
    enforced: dict[str, int] = Field(description="enforced matches by effect")
    asked: int = Field(description="approvals this rule asked for")
    last_at: datetime


class ToolPolicyReport(BaseModel):
    since: datetime
    until: datetime
    items: list[ToolPolicyReportItem]


class ReviewModeIn(BaseModel):
    review_mode: ReviewMode | None = Field(description="null: the chat's agent's")


class ReviewModeOut(BaseModel):
    chat_id: UUID
    review_mode: ReviewMode | None


def _out(row: PolicyRow) -> dict[str, Any]:
    return {**row.__dict__, "when": row.when_expr}


def _fields(body: BaseModel) -> dict[str, Any]:
    return body.model_dump(exclude_unset=True, exclude={"position"}, exclude_none=True)


@router.get("", operation_id="list_tool_policies", response_model=ToolPolicyList)
async def list_tool_policies(principal: OrgAdmin) -> dict[str, Any]:
    """The org's rules in order (the first that matches a call decides it)."""
    return {"items": [_out(r) for r in await tool_policies.list_policies(principal.org_id)]}


@router.get("/report", operation_id="tool_policy_report", response_model=ToolPolicyReport)
async def tool_policy_report(
    principal: OrgAdmin, since: datetime | None = None, until: datetime | None = None
) -> dict[str, Any]:
    """What each rule did (or, log-only, would have done) between `since` and `until` (default: the last 7 days)."""
    return await policy_report.report(principal.org_id, since, until)


@router.post("", operation_id="create_tool_policy", response_model=ToolPolicyOut, status_code=201)
async def create_tool_policy(body: ToolPolicyIn, principal: OrgAdmin) -> dict[str, Any]:
    """Add a rule (422 `invalid_policy_rule` with the line and column of a CEL error)."""
    row = await tool_policies.create_policy(principal.org_id, principal.user_id, _fields(body), body.position)
    return _out(row)


@router.put("/order", operation_id="order_tool_policies", response_model=ToolPolicyList)
async def order_tool_policies(body: ToolPolicyOrder, principal: OrgAdmin) -> dict[str, Any]:
    """Put every rule in a new order."""
    return {"items": [_out(r) for r in await tool_policies.reorder_policies(principal.org_id, body.ids)]}


@router.patch("/{rule_id}", operation_id="update_tool_policy", response_model=ToolPolicyOut)
async def update_tool_policy(rule_id: UUID, body: ToolPolicyPatch, principal: OrgAdmin) -> dict[str, Any]:
    row = await tool_policies.update_policy(principal.org_id, rule_id, _fields(body), body.position)
    return _out(row)


@router.delete("/{rule_id}", operation_id="delete_tool_policy", status_code=204)
async def delete_tool_policy(rule_id: UUID, principal: OrgAdmin) -> Response:
    await tool_policies.delete_policy(principal.org_id, rule_id)
    return Response(status_code=204)


@chats_router.put("/{chat_id}/review-mode", operation_id="set_chat_review_mode", response_model=ReviewModeOut)
async def set_chat_review_mode(chat_id: UUID, body: ReviewModeIn, principal: CurrentPrincipal) -> dict[str, Any]:
    """Who reviews the chat's acting calls from its next run on (the stricter of the chat's and its agent's
    applies)."""
    await run_policies.set_chat_review_mode(principal.org_id, principal.user_id, chat_id, body.review_mode)
    return {"chat_id": chat_id, "review_mode": body.review_mode}
