"""FastAPI dependencies shared by the routers of the API and of the stream function: the one way a route gets its
caller (`CurrentPrincipal`; `StreamReader` for GET event streams), and role guards."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import parse_qsl, urlencode

from fastapi import Depends, Query
from starlette.requests import HTTPConnection

from personal_agent.errors import AppError, Forbidden, Unauthorized
from personal_agent.identity.principal import Principal

QUERY_TOKEN = "access_token"


def take_query_token(request: HTTPConnection) -> str | None:
    """Remove `?access_token=` from the request and return it. The scope is edited in place, so the access
    log, error reports and `request.url` (everything after this) never see the token."""
    raw: bytes = request.scope.get("query_string", b"")
    if not raw:
        return None
    pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True)
    tokens = [value for key, value in pairs if key == QUERY_TOKEN]
    if not tokens:
        return None
    request.scope["query_string"] = urlencode([(k, v) for k, v in pairs if k != QUERY_TOKEN]).encode("latin-1")
    return tokens[-1]


async def _verified(request: HTTPConnection, authorization: str | None) -> Principal:
    """The caller of this `Authorization` value, verified once per request; 401/403 with a stable code."""
    cached: Principal | None = getattr(request.state, "principal", None)
    if cached is not None:
        return cached
    if authorization is None:
        raise Unauthorized("missing bearer token", code="missing_token")
    from personal_agent.identity.authenticate import authenticate

    principal = await authenticate(authorization, request.headers.get("x-org"))
    request.state.principal = principal
    return principal


async def get_principal(request: HTTPConnection) -> Principal:
    """The verified caller (OIDC bearer or personal access token) from the `Authorization` header. A token in the
    URL is refused (400 `token_in_query`: it could be logged or replayed); only GET event streams take one."""
    if take_query_token(request) is not None:
        raise AppError(
            "send the token in the Authorization header; a token in the URL is accepted only by GET event streams",
            code="token_in_query",
            status=400,
        )
    return await _verified(request, request.headers.get("authorization"))


async def get_stream_reader(
    request: HTTPConnection,
    access_token: Annotated[
        str | None,
        Query(description="only for EventSource clients, which cannot send `Authorization`; never logged"),
    ] = None,
) -> Principal:
    """The caller of a GET event stream: the bearer header, or `?access_token=` for clients (EventSource) that
    cannot set headers."""
    del access_token  # declared for the OpenAPI document; read (and scrubbed from the request) below
    query_token = take_query_token(request)
    authorization = request.headers.get("authorization")
    if authorization is None and query_token:
        authorization = f"Bearer {query_token}"
    return await _verified(request, authorization)


CurrentPrincipal = Annotated[Principal, Depends(get_principal)]
StreamReader = Annotated[Principal, Depends(get_stream_reader)]


def require_roles(*roles: str) -> Any:
    """A dependency that answers 403 unless the caller holds one of `roles` in the current org.

    Use as `dependencies=[require_roles("org-admin", "admin")]`, or annotate a parameter with it.
    """

    async def _guard(principal: CurrentPrincipal) -> Principal:
        if not principal.roles & set(roles):
            raise Forbidden(f"this route needs one of the roles: {', '.join(roles)}", code="role_required")
        return principal

    return Depends(_guard)


# An org admin of the current org (platform admins count).
OrgAdmin = Annotated[Principal, require_roles("org-admin", "admin")]
# A platform admin.
PlatformAdmin = Annotated[Principal, require_roles("admin")]
