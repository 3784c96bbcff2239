"""Local-mode only: the dev issuer's JWKS and the web chat's dev login. Never mounted when PA_ENV=aws."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from personal_agent.identity.principal import Role
from personal_agent.settings import get_settings

router = APIRouter(tags=["dev"])
JWKS_PATH = "/.well-known/jwks.json"


class DevLoginIn(BaseModel):
    org: Annotated[str, Field(min_length=1, max_length=63, pattern=r"^[a-z0-9][a-z0-9-]*$")]
    user: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._@+-]+$")]
    role: Role = "user"


class DevLoginOut(BaseModel):
    access_token: str
    token_type: str = "Bearer"
    expires_in: int
    org: str
    user: str
    roles: list[str]


@router.get(JWKS_PATH, operation_id="dev_issuer_jwks", include_in_schema=False)
async def dev_jwks() -> dict[str, Any]:
    """The dev issuer's public keys (what a real IdP publishes at its jwks_uri)."""
    from personal_agent.identity.dev_issuer import DevIssuer

    return DevIssuer.from_settings(get_settings()).public_jwks().as_json()


@router.post("/api/v1/dev/login", operation_id="dev_login")
async def dev_login(body: DevLoginIn) -> DevLoginOut:
    """A dev-issuer token for {org, user, role}, verified through the same path as every request."""
    from personal_agent.identity.authenticate import authenticate
    from personal_agent.identity.dev_issuer import DevIssuer

    settings = get_settings()
    ttl = settings.dev_token_ttl_seconds
    token = DevIssuer.from_settings(settings).mint(
        subject=body.user, orgs=[body.org], roles=[body.role], ttl_seconds=ttl
    )
    principal = await authenticate(f"Bearer {token}")  # upserts the user and membership, as a real login would
    return DevLoginOut(
        access_token=token,
        expires_in=ttl,
        org=principal.org_slug,
        user=principal.subject,
        roles=sorted(principal.roles),
    )
