"""Admin API for governance: routing settings, providers and models, budgets, provider keys."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import OrgAdmin
from personal_agent.governance import admin, budgets

router = APIRouter(prefix="/api/v1/admin", tags=["governance"])
keys_router = APIRouter(prefix="/api/v1/keys", tags=["keys"])

EMAIL_DOMAIN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$"
Tag = Literal["frontier", "coding", "reasoning", "vision", "fast", "cheap"]


class OrgSettings(BaseModel):
    tier_floor: int
    confidence_threshold: float
    routing_model: str | None
    default_model: str | None
    output_email_domains: list[str] = Field(
        description="domains workflow e-mail outputs may go to besides the org's members' own addresses"
    )
    code_execution: bool | None = Field(
        None, description="whether runs are offered `run_python` (null: the deployment's default)"
    )
    trace_content: bool = Field(
        False,
        description="exported traces carry prompts and answers (only where the operator's PA_OTEL_CONTENT allows it;"
        " never for a restricted chat)",
    )


class ProviderModelOut(BaseModel):
    id: UUID
    provider_id: UUID
    name: str
    tags: list[Tag]
    quality: int
    input_price: float | None = Field(description="USD per million input tokens; null: from genai-prices")
    output_price: float | None = Field(description="USD per million output tokens; null: from genai-prices")
    context_window: int | None = Field(None, description="tokens it reads in one request; null: 128,000")
    enabled: bool
    created_at: datetime


class ProviderOut(BaseModel):
    id: UUID
    name: str
    kind: Literal["openai", "anthropic", "bedrock", "openai-compatible"]
    base_url: str | None
    trust_tier: int
    locality: Literal["local", "region", "remote"]
    key_id: UUID | None = Field(description="the org's key it uses; null: the platform's")
    enabled: bool
    created_at: datetime
    models: list[ProviderModelOut]


class ProviderList(BaseModel):
    items: list[ProviderOut]


class BudgetOut(BaseModel):
    id: UUID
    scope: Literal["org", "user"]
    user_id: UUID | None
    monthly_usd: float
    created_at: datetime


class BudgetList(BaseModel):
    items: list[BudgetOut]


class ProviderKeyOut(BaseModel):
    id: UUID
    provider: str
    label: str
    key_hint: str = Field(description="the key's last four characters (the key itself is never returned)")
    hint: str = Field(description="the same as `key_hint`")
    created_at: datetime


class ProviderKeyList(BaseModel):
    items: list[ProviderKeyOut]


class OrgSettingsIn(BaseModel):
    tier_floor: int = Field(0, ge=0, le=2)
    confidence_threshold: float = Field(0.8, ge=0, le=1)
    routing_model: str | None = Field(None, max_length=200)
    default_model: str | None = Field(None, max_length=200)
    output_email_domains: list[Annotated[str, Field(pattern=EMAIL_DOMAIN, max_length=253)]] | None = Field(
        None, max_length=50, description="e-mail output domains besides members' addresses; left out: unchanged"
    )
    code_execution: bool | None = Field(None, description="offer `run_python` to the org's runs; left out: unchanged")
    trace_content: bool | None = Field(
        None,
        description="let exported traces carry the org's prompts and answers (off by default; the operator's"
        " PA_OTEL_CONTENT must allow it too; never for a restricted chat); left out: unchanged",
    )


class ProviderIn(BaseModel):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,40}$")
    kind: Literal["openai", "anthropic", "bedrock", "openai-compatible"]
    base_url: str | None = Field(None, max_length=500, pattern=r"^https?://")
    trust_tier: int = Field(ge=0, le=2)
    locality: Literal["local", "region", "remote"] = "remote"
    key_id: UUID | None = None


class ModelIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    tags: list[Tag] = []
    quality: int = Field(10, ge=0, le=20)
    input_price: Decimal | None = Field(None, ge=0, description="USD per million input tokens")
    output_price: Decimal | None = Field(None, ge=0, description="USD per million output tokens")
    context_window: int | None = Field(
        None, ge=512, le=10_000_000, description="tokens it reads in one request (history is cut to fit); null: 128,000"
    )


class BudgetIn(BaseModel):
    scope: Literal["org", "user"]
    user_id: UUID | None = None
    monthly_usd: Decimal = Field(ge=0, le=Decimal("1000000"))


class KeyIn(BaseModel):
    provider: str = Field(min_length=1, max_length=60)
    label: str = Field("", max_length=100)
    key: str = Field(min_length=8, max_length=4096)


@router.get("/settings", operation_id="get_org_settings", response_model=OrgSettings)
async def get_org_settings(principal: OrgAdmin) -> dict[str, Any]:
    return await admin.get_settings_row(principal.org_id)


@router.put("/settings", operation_id="put_org_settings", response_model=OrgSettings)
async def put_org_settings(body: OrgSettingsIn, principal: OrgAdmin) -> dict[str, Any]:
    return await admin.put_settings(principal.org_id, body.model_dump())


@router.get("/providers", operation_id="list_providers", response_model=ProviderList)
async def list_providers(principal: OrgAdmin) -> dict[str, Any]:
    return {"items": await admin.list_providers(principal.org_id)}


@router.post("/providers", status_code=201, operation_id="create_provider", response_model=ProviderOut)
async def create_provider(body: ProviderIn, principal: OrgAdmin) -> dict[str, Any]:
    """422 `address_not_allowed` for a base_url off the public internet (unless the operator allow-lists its
    host), 409 `key_endpoint_mismatch` for a key entered for another endpoint (a key is bound to the first
    provider's kind and base_url it is attached to)."""
    from personal_agent.governance.providers import create_provider as create

    return await create(principal.org_id, body.model_dump())


@router.delete("/providers/{provider_id}", status_code=204, operation_id="delete_provider")
async def delete_provider(provider_id: UUID, principal: OrgAdmin) -> Response:
    await admin.delete_provider(principal.org_id, provider_id)
    return Response(status_code=204)


@router.post(
    "/providers/{provider_id}/models",
    status_code=201,
    operation_id="add_provider_model",
    response_model=ProviderModelOut,
)
async def add_model(provider_id: UUID, body: ModelIn, principal: OrgAdmin) -> dict[str, Any]:
    return await admin.add_model(principal.org_id, provider_id, body.model_dump())


@router.delete("/providers/{provider_id}/models/{model_id}", status_code=204, operation_id="delete_provider_model")
async def delete_model(provider_id: UUID, model_id: UUID, principal: OrgAdmin) -> Response:
    await admin.delete_model(principal.org_id, provider_id, model_id)
    return Response(status_code=204)


@router.get("/budgets", operation_id="list_budgets", response_model=BudgetList)
async def list_budgets(principal: OrgAdmin) -> dict[str, Any]:
    return {"items": await budgets.list_budgets(principal.org_id)}


@router.put("/budgets", operation_id="set_budget", response_model=BudgetOut)
async def set_budget(body: BudgetIn, principal: OrgAdmin) -> dict[str, Any]:
    """Set the org's monthly cap, or a member's (`scope=user` with `user_id`; 404 `user_not_found` for anyone
    who is not a member). The tightest of the user's, the org's and the platform's caps applies."""
    from personal_agent.errors import InvalidInput

    if (body.scope == "user") != (body.user_id is not None):
        raise InvalidInput("`user_id` goes with `scope=user` only", code="invalid_budget_scope")
    return await budgets.set_budget(principal.org_id, body.scope, body.user_id, body.monthly_usd)


@router.delete("/budgets/{budget_id}", status_code=204, operation_id="delete_budget")
async def delete_budget(budget_id: UUID, principal: OrgAdmin) -> Response:
    from personal_agent.errors import NotFound

    if not await budgets.delete_budget(principal.org_id, budget_id):
        raise NotFound("budget not found", code="budget_not_found")
    return Response(status_code=204)


@keys_router.get("", operation_id="list_keys", response_model=ProviderKeyList)
async def list_keys(principal: OrgAdmin) -> dict[str, Any]:
    """The org's provider keys, masked (write-only: a key is never returned)."""
    from personal_agent.governance.keys import list_keys as rows

    return {"items": [{**r, "hint": r["key_hint"]} for r in await rows(principal.org_id)]}


@keys_router.post("", status_code=201, operation_id="create_key", response_model=ProviderKeyOut)
async def create_key(body: KeyIn, principal: OrgAdmin) -> dict[str, Any]:
    from personal_agent.governance.keys import store_key

    row = await store_key(principal.org_id, principal.user_id, body.provider, body.label, body.key)
    return {**row, "hint": row["key_hint"]}


@keys_router.delete("/{key_id}", status_code=204, operation_id="delete_key")
async def delete_key(key_id: UUID, principal: OrgAdmin) -> Response:
    """Delete a key; the providers that used it are disabled (they never fall back to the platform's key)."""
    from personal_agent.governance.keys import delete_key as remove

    await remove(principal.org_id, key_id)
    return Response(status_code=204)
