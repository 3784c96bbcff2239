"""`/api/v1/me`: who am I, and my personal access tokens (create once-shown, list, revoke)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.errors import InvalidInput
from personal_agent.identity.principal import Role

router = APIRouter(prefix="/api/v1/me", tags=["me"])


class OrgOut(BaseModel):
    id: UUID
    slug: str


class MeOut(BaseModel):
    user_id: UUID
    subject: str
    org: OrgOut
    roles: list[str]
    via: str
    orgs: list[str] = Field(description="orgs this credential may act in, for the X-Org header")


class TokenIn(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    expires_at: datetime | None = None
    expires_in_days: Annotated[int | None, Field(ge=1, le=3650)] = None
    roles: list[Role] | None = None


class TokenOut(BaseModel):
    id: UUID
    name: str
    prefix: str
    org: str
    roles: list[str]
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None
    created_at: datetime


class TokenCreated(TokenOut):
    token: str = Field(description="the secret, shown only in this response")


class TokenList(BaseModel):
    items: list[TokenOut]


def _out(token: Any) -> dict[str, Any]:
    fields = ("id", "name", "prefix", "roles", "expires_at", "revoked_at", "last_used_at", "created_at")
    return {"org": token.org_slug, **{f: getattr(token, f) for f in fields}}


@router.get("", operation_id="get_me")
async def get_me(principal: CurrentPrincipal) -> MeOut:
    """The caller, the org this request acts in and the roles held there."""
    return MeOut(
        user_id=principal.user_id,
        subject=principal.subject,
        org=OrgOut(id=principal.org_id, slug=principal.org_slug),
        roles=sorted(principal.roles),
        via=principal.via,
        orgs=list(principal.orgs or (principal.org_slug,)),
    )


@router.post("/tokens", operation_id="create_token", status_code=201)
async def create_token(body: TokenIn, principal: CurrentPrincipal) -> TokenCreated:
    """A personal access token for the current org; the secret is returned once and stored hashed."""
    from personal_agent.identity.pat import create_token as create

    if body.expires_at is not None and body.expires_in_days is not None:
        raise InvalidInput("give expires_at or expires_in_days, not both", code="invalid_input")
    expires_at = body.expires_at
    if body.expires_in_days is not None:
        expires_at = datetime.now(UTC) + timedelta(days=body.expires_in_days)
    if expires_at is not None:
        if expires_at.tzinfo is None:
            raise InvalidInput("expires_at needs a time zone", code="invalid_input")
        if expires_at <= datetime.now(UTC):
            raise InvalidInput("expires_at is in the past", code="invalid_input")
    token, secret = await create(principal, body.name, roles=list(body.roles or []), expires_at=expires_at)
    return TokenCreated(token=secret, **_out(token))


@router.get("/tokens", operation_id="list_tokens")
async def list_tokens(principal: CurrentPrincipal) -> TokenList:
    """The caller's tokens in the current org (never their secrets)."""
    from personal_agent.identity.pat import list_tokens as list_

    return TokenList(items=[TokenOut(**_out(t)) for t in await list_(principal)])


@router.delete("/tokens/{token_id}", operation_id="revoke_token", status_code=204)
async def revoke_token(token_id: UUID, principal: CurrentPrincipal) -> Response:
    """Revoke a token; it is refused from the next request on."""
    from personal_agent.identity.pat import revoke_token as revoke

    await revoke(principal, token_id)
    return Response(status_code=204)
