"""Slack's three inbound endpoints, verified before anything else: the workspace names the org (`team_id`), the
org's signing secret checks the request (401 `signature_invalid`, nothing stored or started), a request seen before
is a replay (401 `signature_replayed`); then the message or decision is handed on (`jobs.dispatch`) and Slack gets
its 200 at once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from personal_agent.channels import configs, jobs, slack, thread_store
from personal_agent.channels.inbound import Decision, Inbound, Reaction
from personal_agent.db import org_transaction
from personal_agent.errors import Unauthorized
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.channels")


async def _verified(team_id: str, body: bytes, headers: Mapping[str, str]) -> configs.Opened:
    opened = await configs.by_key("slack", team_id) if team_id else None
    if opened is None or not slack.signature_ok(opened.secrets.get("signing_secret", ""), body, headers):
        raise slack.refused()
    async with org_transaction(opened.config.org_id) as conn:
        fresh = await thread_store.first_seen(conn, opened.config.org_id, "slack", slack.request_id(headers), "")
    if not fresh:
        raise Unauthorized("this Slack request was already received", code="signature_replayed")
    return opened


async def _first_time(org_id: UUID, item: Inbound | Decision | Reaction) -> bool:
    """Record the message once (Slack retries an event it thinks was missed): False for a retry."""
    async with org_transaction(org_id) as conn:
        return await thread_store.first_seen(conn, org_id, "slack", item.event_id, item.sender)


async def _url_verification(body: bytes, headers: Mapping[str, str], payload: dict[str, Any]) -> dict[str, Any]:
    """Slack checks the endpoint before it sends events; the request names no workspace, so any org's secret that
    verifies it does."""
    for opened in await configs.all_of("slack"):
        if slack.signature_ok(opened.secrets.get("signing_secret", ""), body, headers):
            return {"challenge": str(payload.get("challenge", ""))}
    raise slack.refused()


async def receive_event(body: bytes, headers: Mapping[str, str]) -> dict[str, Any]:
    """`POST /api/v1/channels/slack/events`: a message for the agent, or a thumb on one of its answers."""
    payload = slack.parse_json(body)
    if payload.get("type") == "url_verification":
        return await _url_verification(body, headers, payload)
    opened = await _verified(str(payload.get("team_id", "")), body, headers)
    message = slack.event_message(opened.config.org_id, payload) or slack.reaction(opened.config.org_id, payload)
    if message is not None and await _first_time(opened.config.org_id, message):
        await jobs.dispatch(message)
    return {"ok": True}


def _open_modal(bot_token: str, trigger_id: str, view: dict[str, Any]) -> bool:
    """`views.open` (its trigger lives 3 seconds: called before the ack); False when Slack refuses."""
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    try:
        WebClient(token=bot_token, base_url=get_settings().slack_api_url).views_open(trigger_id=trigger_id, view=view)
    except SlackApiError as exc:
        log.warning("Slack refused to open the deny modal: %s", exc.response.get("error"))
        return False
    return True


async def receive_interaction(body: bytes, headers: Mapping[str, str]) -> dict[str, Any] | None:
    """`POST /api/v1/channels/slack/interactions`: an approval button (Deny opens a modal asking why), or the
    modal's submission (None: Slack closes the modal on an empty 200)."""
    payload = slack.interaction_payload(body)
    opened = await _verified(str((payload.get("team") or {}).get("id", "")), body, headers)
    event_id = slack.request_id(headers).replace("sig:", "action:", 1)
    org_id = opened.config.org_id
    if payload.get("type") == "view_submission":
        denial = slack.modal_denial(org_id, payload, event_id)
        if denial is not None and await _first_time(org_id, denial):
            await jobs.dispatch(denial)
        return None
    view = slack.deny_modal(payload)
    token, trigger = opened.secrets.get("bot_token", ""), str(payload.get("trigger_id") or "")
    if view is not None and trigger and await asyncio.to_thread(_open_modal, token, trigger, view):
        return {"ok": True}  # the decision comes with the modal's submission
    decision = slack.decision(org_id, payload, event_id)
    if decision is not None and await _first_time(org_id, decision):
        await jobs.dispatch(decision)
    return {"ok": True}


async def receive_command(body: bytes, headers: Mapping[str, str]) -> dict[str, Any]:
    """`POST /api/v1/channels/slack/commands`: the slash command's text is a new conversation."""
    form = slack.parse_form(body)
    opened = await _verified(form.get("team_id", ""), body, headers)
    event_id = "command:" + (form.get("trigger_id") or slack.request_id(headers))
    message = slack.command_message(opened.config.org_id, form, event_id)
    if not message.text:
        return {"response_type": "ephemeral", "text": "Say what you need after the command."}
    if await _first_time(opened.config.org_id, message):
        await jobs.dispatch(message)
    return {"response_type": "ephemeral", "text": "On it - the answer will be in a thread here."}
