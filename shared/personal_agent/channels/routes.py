"""The channels' inbound endpoints. No user's bearer token here: each request proves itself with its channel's own
signature (Slack's signing secret, Telegram's secret token), checked before anything is stored; the ack is at once
(the run happens after, `jobs.dispatch`). On AWS the channels function serves this router; locally the dev server
serves it with the rest of the API. E-mail comes in by SES (AWS) or `pa dev`'s SMTP port (`PA_SMTP_PORT`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

router = APIRouter(prefix="/api/v1/channels", tags=["channels"])
MAX_BODY = 256 * 1024

# The body is read raw (the signature covers its bytes), so FastAPI cannot describe it by itself.
_JSON_BODY = {"requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}}}
_FORM_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/x-www-form-urlencoded": {"schema": {"type": "object"}}},
    }
}


class ChannelAck(BaseModel):
    """The channel's request was taken (its run, if any, starts after this answer)."""

    ok: bool = True
    challenge: str | None = Field(None, description="Slack's `url_verification`: its challenge, echoed")


class SlackCommandAck(BaseModel):
    """What Slack shows the person who used the slash command (only them: `ephemeral`)."""

    response_type: str = "ephemeral"
    text: str


async def _body(request: Request) -> bytes:
    from personal_agent.errors import AppError

    body = await request.body()
    if len(body) > MAX_BODY:
        raise AppError(f"the request is larger than {MAX_BODY} bytes", code="payload_too_large", status=413)
    return body


@router.post(
    "/slack/events",
    operation_id="slack_events",
    response_model=ChannelAck,
    response_model_exclude_none=True,
    openapi_extra=_JSON_BODY,
)
async def slack_events(request: Request) -> dict[str, Any]:
    """Slack's Events API: `url_verification`, `app_mention`, `message.im` (signed with the app's signing secret)."""
    from personal_agent.channels.slack_receive import receive_event

    return await receive_event(await _body(request), request.headers)


@router.post(
    "/slack/interactions",
    operation_id="slack_interactions",
    response_model=ChannelAck,
    response_model_exclude_none=True,
    openapi_extra=_FORM_BODY,
)
async def slack_interactions(request: Request) -> Any:
    """Slack's interactivity payloads: the approval buttons (Deny opens a modal asking why) and the modal's
    submission (answered with an empty 200, which closes it)."""
    from fastapi import Response

    from personal_agent.channels.slack_receive import receive_interaction

    answer = await receive_interaction(await _body(request), request.headers)
    return Response(status_code=200) if answer is None else answer


@router.post("/slack/commands", operation_id="slack_commands", response_model=SlackCommandAck, openapi_extra=_FORM_BODY)
async def slack_commands(request: Request) -> dict[str, Any]:
    """The Slack app's slash command: its text starts a conversation answered in a thread."""
    from personal_agent.channels.slack_receive import receive_command

    return await receive_command(await _body(request), request.headers)


@router.post(
    "/telegram/{org_slug}",
    operation_id="telegram_update",
    response_model=ChannelAck,
    response_model_exclude_none=True,
    openapi_extra=_JSON_BODY,
)
async def telegram_update(org_slug: str, request: Request) -> ChannelAck:
    """An update from the org's Telegram bot (its webhook, with the secret token it was given)."""
    from personal_agent.channels.telegram import receive_update

    await receive_update(org_slug, await _body(request), request.headers)
    return ChannelAck()


@router.get(
    "/slack/oauth",
    operation_id="slack_oauth_callback",
    status_code=303,
    responses={303: {"description": "back to the web chat's settings, the workspace installed"}},
)
async def slack_oauth(code: str = Query(max_length=512), state: str = Query(max_length=2048)) -> Any:
    """Slack's OAuth v2 callback: the signed state checked, the code exchanged (`oauth.v2.access`), the workspace's
    bot token stored sealed as the org's Slack channel; then back to the web chat's settings."""
    from fastapi.responses import RedirectResponse

    from personal_agent.channels.slack_install import complete
    from personal_agent.settings import get_settings

    config = await complete(code, state)
    target = f"{get_settings().public_url.rstrip('/')}/settings?slack_installed={config.external_key}"
    return RedirectResponse(target, status_code=303)
