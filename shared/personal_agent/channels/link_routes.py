"""`/api/v1/me/channel-links`: a member confirms the one-time code a channel gave them (their Slack, Telegram or
e-mail account is then theirs in this org), lists and removes their linked accounts."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.channels import links
from personal_agent.channels.config_store import ChannelKind
from personal_agent.channels.link_store import ChannelLink

router = APIRouter(prefix="/api/v1/me/channel-links", tags=["channels"])


class LinkCodeIn(BaseModel):
    code: str = Field(min_length=8, max_length=16, description="the 8-character code the channel replied with")


class ChannelLinkOut(BaseModel):
    kind: ChannelKind
    external_id: str
    label: str
    created_at: datetime


def _out(link: ChannelLink) -> ChannelLinkOut:
    return ChannelLinkOut(kind=link.kind, external_id=link.external_id, label=link.label, created_at=link.created_at)


@router.post("", operation_id="confirm_channel_link", response_model=ChannelLinkOut, status_code=201)
async def confirm_link(body: LinkCodeIn, principal: CurrentPrincipal) -> ChannelLinkOut:
    return _out(await links.confirm(principal, body.code))


@router.get("", operation_id="list_channel_links", response_model=list[ChannelLinkOut])
async def list_links(principal: CurrentPrincipal) -> list[ChannelLinkOut]:
    return [_out(link) for link in await links.list_links(principal)]


@router.delete("/{kind}/{external_id}", operation_id="delete_channel_link", status_code=204)
async def delete_link(
    kind: Literal["slack", "telegram", "email"], external_id: str, principal: CurrentPrincipal
) -> Response:
    await links.unlink(principal, kind, external_id)
    return Response(status_code=204)
