"""Local-mode only: the dev issuer's JWKS and the web chat's dev login. Never mounted when PA_ENV=aws.

In local mode they refuse (403 `dev_login_disabled`) unless the dev issuer is trusted (the server bound
to loopback, see identity/dev_issuer.py), and dev login answers only a request from this machine that
names it by a loopback host: a dev server reached some other way — `uvicorn --host 0.0.0.0`, a proxy,
a DNS-rebound name — hands out no tokens. PA_DEV_LOGIN_ALLOW_REMOTE=true lifts both.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from personal_agent.errors import Forbidden
from personal_agent.identity.principal import Role
from personal_agent.settings import Settings, get_settings

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


def _trusted_settings() -> Settings:
    """The settings, if the dev issuer is trusted in this process; 403 `dev_login_disabled` otherwise."""
    from personal_agent.identity.dev_issuer import dev_issuer_refusal

    settings = get_settings()
    reason = dev_issuer_refusal(settings)
    if reason is not None:
        raise Forbidden(reason, code="dev_login_disabled")
    return settings


def _check_local_request(request: Request, settings: Settings) -> None:
    from personal_agent.identity.dev_issuer import is_loopback, split_host

    if settings.dev_login_allow_remote:
        return
    client = request.client.host if request.client else ""
    host = split_host(request.headers.get("host", ""))
    if not is_loopback(client) or host is None or not is_loopback(host[0]):
        raise Forbidden("dev login answers only requests from this machine to localhost", code="dev_login_disabled")


@router.get(JWKS_PATH, operation_id="dev_issuer_jwks", include_in_schema=False)
async def dev_jwks() -> dict[str, Any]:
    """The dev issuer's public keys (what a real IdP publishes at its jwks_uri)."""
    from personal_agent.identity.dev_issuer import DevIssuer

    return DevIssuer.from_settings(_trusted_settings()).public_jwks().as_json()


@router.post("/api/v1/dev/login", operation_id="dev_login", responses={403: {"description": "`dev_login_disabled`"}})
async def dev_login(body: DevLoginIn, request: Request) -> DevLoginOut:
    """A dev-issuer token for {org, user, role}, verified through the same path as every request."""
    from personal_agent.identity.authenticate import authenticate
    from personal_agent.identity.dev_issuer import DevIssuer

    settings = _trusted_settings()
    _check_local_request(request, settings)
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
