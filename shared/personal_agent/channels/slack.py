"""Slack: requests verified with the app's signing secret (`v0` HMAC-SHA256 over `v0:{timestamp}:{body}`, within
5 minutes, compared in constant time by `slack_sdk`'s verifier; a request seen before is refused as a replay), the
Events API (`url_verification`, `app_mention`, `message.im`), the slash command and the interactivity payloads
(approval buttons; Deny opens a modal asking why, its submission denies with that reason) as the channel layer's
values; answers through the Web API (`slack_sdk`, at `PA_SLACK_API_URL`)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs
from uuid import UUID

from personal_agent.channels.inbound import Decision, Inbound, Reaction
from personal_agent.errors import InvalidInput, Unauthorized

MAX_TEXT = 3900  # a Slack message's text is cut at 40,000; keep answers one readable message
_MENTION = re.compile(r"<@[A-Z0-9]+>")


def signature_ok(signing_secret: str, body: bytes, headers: Mapping[str, str]) -> bool:
    from slack_sdk.signature import SignatureVerifier

    timestamp, signature = headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature")
    return SignatureVerifier(signing_secret).is_valid(body, timestamp, signature)


def refused() -> Unauthorized:
    return Unauthorized("the Slack signature is missing, wrong or too old", code="signature_invalid")


def request_id(headers: Mapping[str, str]) -> str:
    """What makes a signed request unique: a second one with the same signature is a replay."""
    return "sig:" + hashlib.sha256(headers.get("x-slack-signature", "").encode()).hexdigest()


def parse_json(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except ValueError:
        raise InvalidInput("the Slack request is not JSON", code="invalid_payload") from None
    if not isinstance(payload, dict):
        raise InvalidInput("the Slack request is not a JSON object", code="invalid_payload")
    return payload


def parse_form(body: bytes) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}


def interaction_payload(body: bytes) -> dict[str, Any]:
    form = parse_form(body)
    if "payload" not in form:
        raise InvalidInput("an interaction carries its `payload`", code="invalid_payload")
    return parse_json(form["payload"].encode())


def event_message(org_id: UUID, payload: dict[str, Any]) -> Inbound | None:
    """An `app_mention`, or a direct message (`message.im`) of a person (not a bot, not an edit); None otherwise."""
    event = payload.get("event") or {}
    kind = event.get("type")
    direct = kind == "message" and event.get("channel_type") == "im" and not event.get("subtype")
    if (kind != "app_mention" and not direct) or event.get("bot_id") or not event.get("user"):
        return None
    thread = str(event.get("thread_ts") or event.get("ts"))
    channel = str(event.get("channel"))
    return Inbound(
        kind="slack",
        org_id=org_id,
        event_id=str(payload.get("event_id") or f"{channel}:{event.get('ts')}"),
        sender=str(event["user"]),
        sender_label=f"<@{event['user']}>",
        thread_key=f"{channel}:{thread}",
        text=_MENTION.sub("", str(event.get("text", ""))).strip(),
        verified_sender=True,
        reply={"channel": channel, "thread_ts": thread},
    )


THUMBS = {"+1": 1, "thumbsup": 1, "-1": -1, "thumbsdown": -1}


def reaction(org_id: UUID, payload: dict[str, Any]) -> Reaction | None:
    """A 👍 or 👎 put on (`reaction_added`) or taken off (`reaction_removed`) a message; None for any other
    reaction or event. A skin tone (`+1::skin-tone-2`) is the same thumb."""
    event = payload.get("event") or {}
    kind, item = event.get("type"), event.get("item") or {}
    if kind not in ("reaction_added", "reaction_removed") or item.get("type") != "message" or not event.get("user"):
        return None
    thumb = THUMBS.get(str(event.get("reaction", "")).split("::", 1)[0])
    if thumb is None:
        return None
    added = kind == "reaction_added"
    return Reaction(
        kind="slack",
        org_id=org_id,
        event_id=str(payload.get("event_id") or f"{kind}:{item.get('channel')}:{item.get('ts')}:{event['user']}"),
        sender=str(event["user"]),
        message_key=f"{item.get('channel')}:{item.get('ts')}",
        rating=thumb if added else None,
        taken_back=None if added else thumb,
    )


def command_message(org_id: UUID, form: dict[str, str], event_id: str) -> Inbound:
    """A slash command (`/agent what is due today?`): a new conversation, answered in a thread under it."""
    channel = form.get("channel_id", "")
    return Inbound(
        kind="slack",
        org_id=org_id,
        event_id=event_id,
        sender=form.get("user_id", ""),
        sender_label=f"<@{form.get('user_id', '')}>",
        thread_key=f"command:{channel}:{form.get('trigger_id') or event_id}",
        text=form.get("text", "").strip(),
        verified_sender=True,
        reply={"channel": channel, "thread_ts": None},
    )


def decision(org_id: UUID, payload: dict[str, Any], event_id: str) -> Decision | None:
    """An approval button (`block_actions` with `approve` or `deny` and the approval's id); None otherwise."""
    actions = payload.get("actions") or []
    if payload.get("type") != "block_actions" or not actions or actions[0].get("action_id") not in ("approve", "deny"):
        return None
    try:
        approval_id = UUID(str(actions[0].get("value")))
    except ValueError:
        raise InvalidInput("the button names no approval", code="invalid_payload") from None
    message = payload.get("message") or {}
    channel = str((payload.get("channel") or {}).get("id", ""))
    user = str((payload.get("user") or {}).get("id", ""))
    return Decision(
        kind="slack",
        org_id=org_id,
        event_id=event_id,
        sender=user,
        sender_label=f"<@{user}>",
        approval_id=approval_id,
        decision=actions[0]["action_id"],
        reply={"channel": channel, "thread_ts": message.get("thread_ts") or message.get("ts")},
    )


def approval_blocks(approval: dict[str, Any]) -> list[dict[str, Any]]:
    args = json.dumps(approval.get("args", {}), ensure_ascii=False)[:500]
    text = f"*{approval.get('tool')}* is waiting for your approval:\n```{args}```"
    buttons = [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": label},
            "action_id": action,
            "value": approval["approval_id"],
        }
        for action, label in (("approve", "Approve"), ("deny", "Deny"))
    ]
    buttons[0]["style"], buttons[1]["style"] = "primary", "danger"
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text}}, {"type": "actions", "elements": buttons}]


DENY_MODAL = "deny_reason"
MAX_REASON = 500


def deny_modal(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The Deny button's modal (`views.open`): a reason to give; it carries the approval and the thread along."""
    actions = payload.get("actions") or []
    if payload.get("type") != "block_actions" or not actions or actions[0].get("action_id") != "deny":
        return None
    message = payload.get("message") or {}
    metadata = {
        "approval_id": str(actions[0].get("value", "")),
        "channel": str((payload.get("channel") or {}).get("id", "")),
        "thread_ts": message.get("thread_ts") or message.get("ts"),
    }
    reason_input = {"type": "plain_text_input", "action_id": "reason", "multiline": True, "max_length": MAX_REASON}
    return {
        "type": "modal",
        "callback_id": DENY_MODAL,
        "private_metadata": json.dumps(metadata),
        "title": {"type": "plain_text", "text": "Deny"},
        "submit": {"type": "plain_text", "text": "Deny"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "reason",
                "label": {"type": "plain_text", "text": "Why?"},
                "element": reason_input,
            }
        ],
    }


def modal_denial(org_id: UUID, payload: dict[str, Any], event_id: str) -> Decision | None:
    """The Deny modal's `view_submission`: a denial with its reason; None for another view."""
    view = payload.get("view") or {}
    if payload.get("type") != "view_submission" or view.get("callback_id") != DENY_MODAL:
        return None
    try:
        metadata = json.loads(view.get("private_metadata") or "{}")
        approval_id = UUID(str(metadata.get("approval_id")))
    except ValueError:
        raise InvalidInput("the modal names no approval", code="invalid_payload") from None
    values = ((view.get("state") or {}).get("values") or {}).get("reason") or {}
    reason = str((values.get("reason") or {}).get("value") or "").strip()[:MAX_REASON]
    user = str((payload.get("user") or {}).get("id", ""))
    return Decision(
        kind="slack",
        org_id=org_id,
        event_id=event_id,
        sender=user,
        sender_label=f"<@{user}>",
        approval_id=approval_id,
        decision="deny",
        reason=reason or None,
        reply={"channel": str(metadata.get("channel", "")), "thread_ts": metadata.get("thread_ts")},
    )
