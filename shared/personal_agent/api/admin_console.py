"""The few admin routes the web console needs beyond the governance API: change a model (enable, tags, quality,
prices) or a provider (enabled, base_url, key, tier, locality), test a provider's connection, each budget with its
spend this month, and the approval audit trail with names and reasons."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from personal_agent.api.deps import OrgAdmin
from personal_agent.api.governance import ProviderModelOut, ProviderOut, Tag
from personal_agent.approvals.audit import audit_trail
from personal_agent.governance import admin, budgets, providers
from personal_agent.governance.provider_connection import check_connection, check_endpoint

router = APIRouter(prefix="/api/v1/admin", tags=["admin"])


class ModelPatch(BaseModel):
    enabled: bool | None = None
    tags: list[Tag] | None = None
    quality: int | None = Field(None, ge=0, le=20)
    input_price: Decimal | None = Field(None, ge=0, description="USD per million input tokens; null: genai-prices")
    output_price: Decimal | None = Field(None, ge=0, description="USD per million output tokens; null: genai-prices")
    context_window: int | None = Field(None, ge=512, le=10_000_000, description="tokens per request; null: 128,000")


class ProviderPatch(BaseModel):
    enabled: bool | None = None
    base_url: str | None = Field(
        None, max_length=500, pattern=r"^https?://", description="null: the kind's default endpoint"
    )
    key_id: UUID | None = Field(None, description="the org's key it uses; null: none (or the platform's)")
    trust_tier: int | None = Field(None, ge=0, le=2)
    locality: Literal["local", "region", "remote"] | None = None


class EndpointIn(BaseModel):
    kind: Literal["openai", "anthropic", "bedrock", "openai-compatible"]
    base_url: str | None = Field(None, max_length=500, pattern=r"^https?://", description="null: the kind's default")


class ConnectionTestOut(BaseModel):
    ok: bool
    status: Literal["ok", "needs_key", "error"] = Field(
        description="needs_key: the endpoint answered and wants the key, which only a run opens"
    )
    message: str = Field(description="what happened, in plain words (never a key or the endpoint's error body)")
    models: list[str] = Field(description="the model ids the endpoint lists (at most 100)")
    elapsed_ms: int


class BudgetSpendOut(BaseModel):
    id: UUID
    scope: Literal["org", "user"]
    user_id: UUID | None
    monthly_usd: float
    spent_usd: float = Field(description="spend this month plus live reservations")
    month_start: datetime
    created_at: datetime


class BudgetSpendList(BaseModel):
    items: list[BudgetSpendOut]


class AuditEntry(BaseModel):
    id: int
    approval_id: UUID | None = Field(description="null: a line a tool rule or the judge wrote without an approval")
    actor_id: UUID | None = Field(description="who decided; null for what the system did (requested, expired)")
    actor_name: str | None = Field(description="the decider's name (or e-mail); null for the system")
    action: str = Field(
        description="requested | approved | approved_partly | denied | expired | escalated | review_asked, and without"
        " an approval: policy_denied | policy_matched | policy_log (a log-only rule's would-have) | judge_denied"
    )
    reason: str | None = Field(description="why, as the decider (or the system) gave it")
    detail: dict[str, Any]
    at: datetime
    tool_name: str
    run_id: UUID | None
    chat_id: UUID | None
    owner_id: UUID | None
    owner_name: str | None = Field(description="whose chat asked: the member's name (or e-mail)")
    chat_url: str | None = Field(description="the web chat's page of the chat the approval was asked in")
    run_url: str | None = Field(description="the API's view of the run")
    status: str | None = Field(description="the approval's status now (null: no approval)")
    tool_call_id: str | None = Field(None, description="the run's tool call the line is about")
    rule_id: UUID | None = Field(None, description="the tool rule that matched (see /admin/tool-policies)")


class AuditPage(BaseModel):
    items: list[AuditEntry]
    next_cursor: str | None


@router.patch(
    "/providers/{provider_id}/models/{model_id}", operation_id="update_provider_model", response_model=ProviderModelOut
)
async def update_model(provider_id: UUID, model_id: UUID, body: ModelPatch, principal: OrgAdmin) -> dict[str, Any]:
    """Change the fields sent; a price sent as null goes back to genai-prices."""
    return await admin.update_model(principal.org_id, provider_id, model_id, body.model_dump(exclude_unset=True))


@router.patch("/providers/{provider_id}", operation_id="update_provider", response_model=ProviderOut)
async def update_provider(provider_id: UUID, body: ProviderPatch, principal: OrgAdmin) -> dict[str, Any]:
    """Change the fields sent. A new base_url passes the address checks (422 `address_not_allowed`); the key it
    keeps or names must have been entered for the new endpoint (409 `key_endpoint_mismatch`)."""
    return await providers.update_provider(principal.org_id, provider_id, body.model_dump(exclude_unset=True))


@router.post("/providers/test-connection", operation_id="test_endpoint_connection", response_model=ConnectionTestOut)
async def test_endpoint_connection(body: EndpointIn, principal: OrgAdmin) -> dict[str, Any]:
    """The same test for a provider not saved yet (no key: an endpoint that wants one says so)."""
    return await check_endpoint(body.kind, body.base_url)


@router.post(
    "/providers/{provider_id}/test-connection",
    operation_id="test_provider_connection",
    response_model=ConnectionTestOut,
)
async def test_provider_connection(provider_id: UUID, principal: OrgAdmin) -> dict[str, Any]:
    """Ask the provider's endpoint for its model list now (5 s timeout, no key sent, the same address checks as a
    run): ok, needs_key or error with a plain message. 422 `connection_test_unsupported` for Bedrock."""
    return await check_connection(principal.org_id, provider_id)


@router.get("/budget-spend", operation_id="list_budget_spend", response_model=BudgetSpendList)
async def budget_spend(principal: OrgAdmin) -> dict[str, Any]:
    """Each cap with what counts against it this month."""
    return {"items": await budgets.spend_by_budget(principal.org_id)}


@router.get("/approval-audit", operation_id="approval_audit", response_model=AuditPage)
async def approval_audit(
    principal: OrgAdmin,
    limit: int = Query(50, ge=1, le=200),
    cursor: str | None = Query(None, max_length=40),
) -> dict[str, Any]:
    """Every approval request and decision in the org, newest first."""
    return await audit_trail(principal, limit, cursor)
