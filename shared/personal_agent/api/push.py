"""`/api/v1/push`: Web Push for approvals. The server's VAPID public key (and whether push is on), and the
caller's own browser subscriptions: add (the browser's `PushSubscription.toJSON()`), list, remove."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.push import service

router = APIRouter(prefix="/api/v1/push", tags=["me"])


class PushConfig(BaseModel):
    enabled: bool = Field(description="false: this server sends no push messages (no VAPID key configured)")
    public_key: str | None = Field(description="the VAPID public key, base64url: `applicationServerKey`")


class SubscriptionKeys(BaseModel):
    p256dh: str = Field(max_length=200, description="the browser's P-256 public key, base64url")
    auth: str = Field(max_length=100, description="the browser's 16-byte auth secret, base64url")


class SubscriptionIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    endpoint: str = Field(max_length=2048, description="the push service URL the browser was given (https)")
    expirationTime: int | None = None  # noqa: N815 - the browser's own field name
    keys: SubscriptionKeys


class Subscription(BaseModel):
    id: UUID
    endpoint: str
    created_at: str


class SubscriptionList(BaseModel):
    items: list[Subscription] = Field(description="oldest first; at most 20 per person (the oldest goes past it)")


@router.get("/config", operation_id="get_push_config", response_model=PushConfig)
async def get_push_config(principal: CurrentPrincipal) -> dict[str, Any]:
    return service.config()


@router.get("/subscriptions", operation_id="list_push_subscriptions", response_model=SubscriptionList)
async def list_push_subscriptions(principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.list_subscriptions(principal)


@router.post("/subscriptions", status_code=201, operation_id="create_push_subscription", response_model=Subscription)
async def create_push_subscription(body: SubscriptionIn, principal: CurrentPrincipal) -> JSONResponse:
    """Subscribe this browser (the same endpoint again: 200 with the same id, its keys replaced). 422
    `invalid_push_subscription` for a URL that is not https or keys that are not the browser's; 409
    `push_not_configured` when the server has no VAPID key."""
    row, created = await service.subscribe(principal, body.endpoint, body.keys.p256dh, body.keys.auth)
    return JSONResponse(row, status_code=201 if created else 200)


@router.delete("/subscriptions/{subscription_id}", status_code=204, operation_id="delete_push_subscription")
async def delete_push_subscription(subscription_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.unsubscribe(principal, subscription_id)
    return Response(status_code=204)
