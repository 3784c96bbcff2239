"""Slack's OAuth v2 install: an org admin follows the install link to Slack's authorize page (`PA_SLACK_AUTHORIZE_URL`)
with the app's client id, its bot scopes, the callback and a signed `state` (the org, the admin, an expiry: HMAC-SHA256
under the app's client secret, 10 minutes); Slack sends them back to the callback with a code, which is exchanged for
the workspace's bot token (`oauth.v2.access`, `slack_sdk`'s WebClient at `PA_SLACK_API_URL`). The org's Slack channel
is then stored as a hand-entered one is: the team id, the bot token and the app's signing secret sealed; the agent
and allow-list already set are kept."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from personal_agent.channels import admin, config_store
from personal_agent.channels.config_store import ChannelConfig
from personal_agent.db import org_transaction
from personal_agent.errors import AppError, Conflict, Forbidden, Unauthorized
from personal_agent.identity.membership_store import roles_and_status
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings

BOT_SCOPES = ("app_mentions:read", "chat:write", "commands", "im:history", "reactions:read")
STATE_SECONDS = 600
CALLBACK = "/api/v1/channels/slack/oauth"


def redirect_uri() -> str:
    return get_settings().public_url.rstrip("/") + CALLBACK


def _check_configured() -> None:
    from personal_agent.secret_env import ensure_secrets_loaded

    ensure_secrets_loaded()  # on AWS the client and signing secrets come from Secrets Manager (PA_SLACK_APP_SECRET_ARN)
    s = get_settings()
    missing = [
        name
        for name, value in (
            ("PA_SLACK_CLIENT_ID", s.slack_client_id),
            ("PA_SLACK_CLIENT_SECRET", s.slack_client_secret),
            ("PA_SLACK_SIGNING_SECRET", s.slack_signing_secret),
            ("PA_PUBLIC_URL", s.public_url),
        )
        if not value
    ]
    if missing:
        raise Conflict(
            f"Slack's install needs {', '.join(missing)}; set the channel up by hand instead",
            code="slack_install_unavailable",
        )


def _mac(payload: str) -> str:
    key = get_settings().slack_client_secret.encode()
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def make_state(principal: Principal, now: float | None = None) -> str:
    expires = int(time.time() if now is None else now) + STATE_SECONDS
    body = {"org": str(principal.org_id), "slug": principal.org_slug, "user": str(principal.user_id), "exp": expires}
    body["n"] = secrets.token_urlsafe(8)
    payload = base64.urlsafe_b64encode(json.dumps(body).encode()).decode().rstrip("=")
    return f"{payload}.{_mac(payload)}"


def read_state(state: str) -> dict[str, Any]:
    """The state's claims; 401 `oauth_state_invalid` for a forged or mangled one, `oauth_state_expired` late."""
    payload, _, mac = state.partition(".")
    if not payload or not hmac.compare_digest(mac.encode(), _mac(payload).encode()):
        raise Unauthorized("the install's state is not ours", code="oauth_state_invalid")
    claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    if int(claims["exp"]) < time.time():
        raise Unauthorized("the install took too long; start it again", code="oauth_state_expired")
    return claims


def install_url(principal: Principal) -> str:
    """Slack's authorize page for this org admin (409 `slack_install_unavailable` without the app's settings)."""
    _check_configured()
    s = get_settings()
    query = {
        "client_id": s.slack_client_id,
        "scope": ",".join(BOT_SCOPES),
        "redirect_uri": redirect_uri(),
        "state": make_state(principal),
    }
    return f"{s.slack_authorize_url}?{urlencode(query)}"


def _exchange(code: str) -> dict[str, Any]:
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    s = get_settings()
    client = WebClient(base_url=s.slack_api_url)
    try:
        answer = client.oauth_v2_access(
            client_id=s.slack_client_id, client_secret=s.slack_client_secret, code=code, redirect_uri=redirect_uri()
        )
    except SlackApiError as exc:
        raise AppError(
            f"Slack refused the install: {exc.response.get('error')}", code="slack_oauth_failed", status=502
        ) from None
    return dict(answer.data) if isinstance(answer.data, dict) else {}


async def complete(code: str, state: str) -> ChannelConfig:
    """The callback: check the state (and that its admin still is one), exchange the code, store the channel."""
    _check_configured()
    claims = read_state(state)
    org_id, user_id = UUID(claims["org"]), UUID(claims["user"])
    async with org_transaction(org_id) as conn:
        membership = await roles_and_status(conn, org_id, user_id)
        existing = await config_store.get(conn, "slack")
    roles = frozenset(membership["roles"]) if membership else frozenset()
    if not roles & {"org-admin", "admin"}:
        raise Forbidden("only an org admin installs Slack", code="forbidden")
    answer = await asyncio.to_thread(_exchange, code)
    team_id, token = str((answer.get("team") or {}).get("id", "")), str(answer.get("access_token", ""))
    if not team_id or not token.startswith("xoxb-"):
        raise AppError("Slack's answer had no workspace or bot token", code="slack_oauth_failed", status=502)
    principal = Principal(user_id, org_id, str(claims["slug"]), roles, f"slack-install:{user_id}")
    secrets_ = {"bot_token": token, "signing_secret": get_settings().slack_signing_secret}
    agent = existing.agent if existing else None
    allowed = (list(existing.allowed_roles), list(existing.allowed_users)) if existing else ([], [])
    return await admin.put_channel(principal, "slack", team_id, agent, secrets_, allowed)
