"""Who is calling: a verified OIDC bearer token or a personal access token, in one org.

Every route that needs a caller goes through `authenticate_request` (via `CurrentPrincipal`);
there is no switch that turns this off, in any environment.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection

from personal_agent.errors import Unauthorized
from personal_agent.identity.principal import Principal


async def authenticate(authorization: str, x_org: str | None = None) -> Principal:
    """The principal for an `Authorization` header value; `Unauthorized`/`Forbidden` with a stable code."""
    scheme, _, credential = authorization.strip().partition(" ")
    credential = credential.strip()
    if scheme.lower() != "bearer" or not credential:
        raise Unauthorized("use `Authorization: Bearer <token>`", code="invalid_authorization_header")
    from personal_agent.identity.pat import PAT_PREFIX, authenticate_token

    if credential.startswith(PAT_PREFIX):  # looked up on every use: its expiry and revocation are exact
        return await authenticate_token(credential, x_org)
    from personal_agent.identity.auth_cache import cached_principal
    from personal_agent.identity.directory import principal_for_token
    from personal_agent.identity.issuers import get_verifier

    verified = await get_verifier().verify(credential)  # expiry and claims every request; signature once per key
    return await cached_principal(credential, x_org, lambda: principal_for_token(verified, x_org))


async def authenticate_request(request: HTTPConnection) -> Principal | None:
    """The verified caller of `request`, or None when it carries no credentials at all."""
    authorization = request.headers.get("authorization")
    if authorization is None:
        return None
    return await authenticate(authorization, request.headers.get("x-org"))
