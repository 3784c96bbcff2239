"""Local-mode only: the dev issuer's device authorization grant (RFC 8628) for `pa login`, and revocation (RFC
7009) for `pa logout`. Mounted with the dev login (api/identity.py) and refusing the same way (dev_login.py).

The device and token endpoints speak OAuth's wire format (form or JSON in, `{"error": ...}` out with 400), as a real
identity provider's do, so the terminal client talks to Keycloak or Auth0 the same way. The web chat's `/device`
page calls `POST /api/v1/dev/device/verify` as the signed-in person to approve or deny a user code.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.api.dev_login import _check_local_request, _trusted_settings
from personal_agent.errors import NotFound

router = APIRouter(tags=["dev"])
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
AUTHORIZE_PATH = "/api/v1/dev/device/authorize"
TOKEN_PATH = "/api/v1/dev/device/token"
REVOKE_PATH = "/api/v1/dev/device/revoke"


async def _form(request: Request) -> dict[str, str]:
    """An OAuth request's parameters: `application/x-www-form-urlencoded` (the standard) or a JSON object."""
    raw = (await request.body()).decode("utf-8", "replace")
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = json.loads(raw or "{}")
        except json.JSONDecodeError:
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    return dict(parse_qsl(raw))


def _oauth_error(error: str, description: str) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=400)


@router.post(AUTHORIZE_PATH, include_in_schema=False)
async def device_authorize(request: Request) -> dict[str, Any]:
    """RFC 8628 §3.2: a device code for the terminal, a user code for the person, where to enter it."""
    from personal_agent.identity.dev_device_grant import DEVICE_CODE_TTL_SECONDS, GRANTS

    _check_local_request(request, _trusted_settings())
    form = await _form(request)
    pending = GRANTS.start(form.get("client_id", "pa-cli"))
    page = str(request.base_url).rstrip("/") + "/device"
    return {
        "device_code": pending.device_code,
        "user_code": pending.user_code,
        "verification_uri": page,
        "verification_uri_complete": f"{page}?user_code={pending.user_code}",
        "expires_in": DEVICE_CODE_TTL_SECONDS,
        "interval": pending.interval,
    }


def _tokens(grantee: Any, client_id: str) -> dict[str, Any]:
    from personal_agent.identity.dev_device_grant import GRANTS
    from personal_agent.identity.dev_issuer import DevIssuer

    settings = _trusted_settings()
    ttl = settings.dev_token_ttl_seconds
    access = DevIssuer.from_settings(settings).mint(
        subject=grantee.subject, orgs=[grantee.org], roles=list(grantee.roles), ttl_seconds=ttl
    )
    refresh = GRANTS.issue_refresh(grantee, client_id)
    return {"access_token": access, "token_type": "Bearer", "expires_in": ttl, "refresh_token": refresh}


@router.post(TOKEN_PATH, include_in_schema=False, response_model=None)
async def device_token(request: Request) -> dict[str, Any] | JSONResponse:
    """RFC 8628 §3.4 (poll with the device code) and RFC 6749 §6 (a refresh token, rotated on use)."""
    from personal_agent.identity.dev_device_grant import GRANTS

    _check_local_request(request, _trusted_settings())
    form = await _form(request)
    grant_type = form.get("grant_type", "")
    if grant_type == DEVICE_GRANT:
        outcome = GRANTS.poll(form.get("device_code", ""))
        if outcome.error or outcome.grantee is None:
            return _oauth_error(outcome.error or "invalid_grant", "the device code is not approved")
        return _tokens(outcome.grantee, outcome.client_id)
    if grant_type == "refresh_token":
        grant = GRANTS.redeem_refresh(form.get("refresh_token", ""))
        if grant is None:
            return _oauth_error("invalid_grant", "the refresh token is unknown, revoked or expired")
        return _tokens(grant.grantee, grant.client_id)
    return _oauth_error("unsupported_grant_type", f"grant_type must be {DEVICE_GRANT} or refresh_token")


@router.post(REVOKE_PATH, include_in_schema=False)
async def device_revoke(request: Request) -> dict[str, Any]:
    """RFC 7009: forget a refresh token (200 whether or not it was known)."""
    from personal_agent.identity.dev_device_grant import GRANTS

    _trusted_settings()
    GRANTS.revoke((await _form(request)).get("token", ""))
    return {}


class DeviceVerifyIn(BaseModel):
    user_code: Annotated[str, Field(min_length=4, max_length=16)]
    decision: Literal["approve", "deny"] = "approve"


class DeviceVerifyOut(BaseModel):
    user_code: str
    status: Literal["approved", "denied"]


@router.post(
    "/api/v1/dev/device/verify",
    operation_id="dev_device_verify",
    responses={404: {"description": "`device_code_not_found`"}, 403: {"description": "`dev_login_disabled`"}},
)
async def device_verify(body: DeviceVerifyIn, principal: CurrentPrincipal) -> DeviceVerifyOut:
    """The signed-in person approves (or denies) the user code a terminal shows: it signs in as them, in this org."""
    from personal_agent.identity.dev_device_grant import GRANTS, Grantee, normalize_user_code

    _trusted_settings()
    grantee = Grantee(subject=principal.subject, org=principal.org_slug, roles=tuple(sorted(principal.roles)))
    if not GRANTS.decide(body.user_code, grantee, approve=body.decision == "approve"):
        raise NotFound("no pending device code has that user code (it may have expired)", code="device_code_not_found")
    status: Literal["approved", "denied"] = "approved" if body.decision == "approve" else "denied"
    return DeviceVerifyOut(user_code=normalize_user_code(body.user_code), status=status)
