"""`/api/v1/admin/channels`: an org admin sets up Slack, Telegram and e-mail in (secrets write-only, like provider
keys: a response says which are set, never their values), and reads the log of recent inbound messages."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Response
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, Field

from personal_agent.api.deps import OrgAdmin
from personal_agent.channels import admin
from personal_agent.channels.config_store import ChannelConfig, ChannelKind

router = APIRouter(prefix="/api/v1/admin/channels", tags=["channels"])
AGENT = Field(None, max_length=64, pattern=r"^[a-z0-9][a-z0-9-]*$", description="the answering agent's slug")


class ChannelAllow(BaseModel):
    """Who may use the channel: members with one of `roles` or one of `members`; both empty: every member."""

    roles: list[Literal["admin", "org-admin", "user"]] = Field(default_factory=list, max_length=3)
    members: list[UUID] = Field(default_factory=list, max_length=500, description="member user ids")


ALLOW = Field(None, description="who may use it (omitted or null: every member of the org)")


def _allowed(allow: ChannelAllow | None) -> tuple[list[str], list[UUID]]:
    return (list(allow.roles), list(allow.members)) if allow else ([], [])


class SlackChannelIn(BaseModel):
    team_id: str = Field(min_length=1, max_length=32, pattern=r"^[A-Z0-9]+$")
    bot_token: str = Field(min_length=1, max_length=512)
    signing_secret: str = Field(min_length=8, max_length=256)
    agent: str | None = AGENT
    allow: ChannelAllow | None = ALLOW


class TelegramChannelIn(BaseModel):
    bot_token: str = Field(min_length=1, max_length=256)
    secret_token: str = Field(min_length=8, max_length=256, pattern=r"^[A-Za-z0-9_-]+$")
    agent: str | None = AGENT
    allow: ChannelAllow | None = ALLOW


class EmailChannelIn(BaseModel):
    address: str = Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")
    agent: str | None = AGENT
    allow: ChannelAllow | None = ALLOW


class ChannelOut(BaseModel):
    kind: ChannelKind
    key: str = Field(description="the Slack team id, the org's slug (Telegram) or the inbound e-mail address")
    agent: str | None
    secrets_set: list[str] = Field(description="which secrets are stored (their values are never returned)")
    allow: ChannelAllow = Field(description="who may use it (both lists empty: every member)")
    updated_at: datetime


class ChannelEventOut(BaseModel):
    event_id: str
    sender: str
    status: str
    run_id: UUID | None
    at: datetime


def _out(config: ChannelConfig) -> ChannelOut:
    names = list(admin.SECRET_NAMES[config.kind]) if config.secret_ciphertext else []
    allow = ChannelAllow(roles=list(config.allowed_roles), members=list(config.allowed_users))
    return ChannelOut(
        kind=config.kind,
        key=config.external_key,
        agent=config.agent,
        secrets_set=names,
        allow=allow,
        updated_at=config.updated_at,
    )


@router.put("/slack", operation_id="put_slack_channel", response_model=ChannelOut)
async def put_slack(body: SlackChannelIn, principal: OrgAdmin) -> ChannelOut:
    secrets = {"bot_token": body.bot_token, "signing_secret": body.signing_secret}
    return _out(await admin.put_channel(principal, "slack", body.team_id, body.agent, secrets, _allowed(body.allow)))


class SlackInstallOut(BaseModel):
    url: str = Field(description="Slack's authorize page to send the admin's browser to")


@router.get(
    "/slack/install",
    operation_id="install_slack_channel",
    response_model=SlackInstallOut,
    responses={302: {"description": "to Slack's authorize page (OAuth v2), with a signed state"}},
)
async def install_slack(principal: OrgAdmin, redirect: bool = True) -> Any:
    """Install the org's Slack app with OAuth v2: a redirect to Slack's authorize page (`redirect=false`: its address
    as JSON, for a page that navigates itself); 409 `slack_install_unavailable` without the app's settings."""
    from personal_agent.channels.slack_install import install_url

    url = install_url(principal)
    return RedirectResponse(url, status_code=302) if redirect else SlackInstallOut(url=url)


@router.put("/telegram", operation_id="put_telegram_channel", response_model=ChannelOut)
async def put_telegram(body: TelegramChannelIn, principal: OrgAdmin) -> ChannelOut:
    """Set the org's bot (and, when the deployment knows its public address, point the bot at its webhook)."""
    await admin.set_telegram_webhook(principal.org_slug, body.bot_token, body.secret_token)
    secrets = {"bot_token": body.bot_token, "secret_token": body.secret_token}
    allowed = _allowed(body.allow)
    return _out(await admin.put_channel(principal, "telegram", principal.org_slug, body.agent, secrets, allowed))


@router.put("/email", operation_id="put_email_channel", response_model=ChannelOut)
async def put_email(body: EmailChannelIn, principal: OrgAdmin) -> ChannelOut:
    allowed = _allowed(body.allow)
    return _out(await admin.put_channel(principal, "email", body.address.lower(), body.agent, {}, allowed))


class ChannelList(BaseModel):
    items: list[ChannelOut]


@router.get("", operation_id="list_channels", response_model=ChannelList)
async def list_channels(principal: OrgAdmin) -> ChannelList:
    """The org's channels that are set up (the admin page reads this: a channel not set up is no error)."""
    return ChannelList(items=[_out(config) for config in await admin.list_channels(principal)])


@router.get("/{kind}", operation_id="get_channel", response_model=ChannelOut)
async def get_channel(kind: Literal["slack", "telegram", "email"], principal: OrgAdmin) -> ChannelOut:
    return _out(await admin.get_channel(principal, kind))


@router.delete("/{kind}", operation_id="delete_channel", status_code=204)
async def delete_channel(kind: Literal["slack", "telegram", "email"], principal: OrgAdmin) -> Response:
    await admin.delete_channel(principal, kind)
    return Response(status_code=204)


@router.get("/{kind}/events", operation_id="list_channel_events", response_model=list[ChannelEventOut])
async def list_events(kind: Literal["slack", "telegram", "email"], principal: OrgAdmin) -> list[ChannelEventOut]:
    """The channel's recent inbound messages and actions, newest first: who, what became of it, its run."""
    return [ChannelEventOut(**e) for e in await admin.recent_events(principal, kind)]
