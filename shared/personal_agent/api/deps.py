"""FastAPI dependencies shared by the routers (`CurrentPrincipal`, role guards)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends
from starlette.requests import HTTPConnection

from personal_agent.errors import Forbidden, Unauthorized
from personal_agent.identity.principal import Principal


async def get_principal(request: HTTPConnection) -> Principal:
    """The verified caller (OIDC bearer or personal access token); 401/403 with a stable code otherwise."""
    cached: Principal | None = getattr(request.state, "principal", None)
    if cached is not None:
        return cached
    from personal_agent.identity.authenticate import authenticate_request

    principal = await authenticate_request(request)
    if principal is None:
        raise Unauthorized("missing bearer token", code="missing_token")
    request.state.principal = principal
    return principal


CurrentPrincipal = Annotated[Principal, Depends(get_principal)]


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
