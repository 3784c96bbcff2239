"""Telegram: an org's bot posts its updates to `POST /api/v1/channels/telegram/{org_slug}` with the secret token
it was given at `setWebhook` (`X-Telegram-Bot-Api-Secret-Token`, compared in constant time: 401 otherwise, nothing
stored or started). Private chats and groups (in a group only messages that mention the bot); inline keyboards for
approvals (`callback_query`); a 👍 or 👎 on an answer is feedback (`message_reaction`); answers sent and edited
through the Bot API (`python-telegram-bot`, at `PA_TELEGRAM_API_URL`)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from personal_agent.channels import configs, jobs, thread_store
from personal_agent.channels.inbound import Decision, Inbound, Reaction
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput, Unauthorized

SECRET_HEADER = "x-telegram-bot-api-secret-token"


def _message(org_id: UUID, update: dict[str, Any]) -> Inbound | None:
    message = update.get("message") or {}
    sender, chat, text = message.get("from") or {}, message.get("chat") or {}, message.get("text")
    if not text or not sender or sender.get("is_bot") or "id" not in chat:
        return None
    group = chat.get("type") in ("group", "supergroup")
    return Inbound(
        kind="telegram",
        org_id=org_id,
        event_id=str(update["update_id"]),
        sender=str(sender["id"]),
        sender_label="@" + str(sender.get("username") or sender.get("first_name") or sender["id"]),
        thread_key=str(chat["id"]),
        text=str(text),
        verified_sender=True,
        reply={"chat_id": chat["id"], "reply_to": message.get("message_id"), "group": group},
    )


def _decision(org_id: UUID, update: dict[str, Any]) -> Decision | None:
    query = update.get("callback_query") or {}
    action, _, approval = str(query.get("data", "")).partition(":")
    chat = ((query.get("message") or {}).get("chat")) or {}
    if action not in ("approve", "deny") or not query.get("from"):
        return None
    try:
        approval_id = UUID(approval)
    except ValueError:
        raise InvalidInput("the button names no approval", code="invalid_payload") from None
    sender = query["from"]
    return Decision(
        kind="telegram",
        org_id=org_id,
        event_id=str(update["update_id"]),
        sender=str(sender["id"]),
        sender_label="@" + str(sender.get("username") or sender.get("first_name") or sender["id"]),
        approval_id=approval_id,
        decision="approve" if action == "approve" else "deny",
        thread_key=str(chat.get("id", "")),
        reply={"chat_id": chat.get("id"), "callback_query_id": query.get("id")},
    )


THUMBS = {"\N{THUMBS UP SIGN}": 1, "\N{THUMBS DOWN SIGN}": -1}


def _thumb(reactions: Any) -> int | None:
    found = [
        THUMBS.get(r.get("emoji", "")) for r in reactions or () if isinstance(r, dict) and r.get("type") == "emoji"
    ]
    thumbs = [t for t in found if t is not None]
    return thumbs[-1] if thumbs else None


def _reaction(org_id: UUID, update: dict[str, Any]) -> Reaction | None:
    """A person's 👍 or 👎 put on a message (`message_reaction`), or taken off it; None for any other reaction."""
    changed = update.get("message_reaction") or {}
    user, chat = changed.get("user") or {}, changed.get("chat") or {}
    if "id" not in user or user.get("is_bot") or "id" not in chat:
        return None
    now, before = _thumb(changed.get("new_reaction")), _thumb(changed.get("old_reaction"))
    if now is None and before is None:
        return None
    return Reaction(
        kind="telegram",
        org_id=org_id,
        event_id=str(update["update_id"]),
        sender=str(user["id"]),
        message_key=f"{chat['id']}:{changed.get('message_id')}",
        rating=1 if now == 1 else -1 if now == -1 else None,
        taken_back=None if now is not None else (1 if before == 1 else -1),
    )


def parse_update(org_id: UUID, body: bytes) -> Inbound | Decision | Reaction | None:
    """A Telegram `Update` (checked by python-telegram-bot's own parser) as a message, a decision or neither."""
    import json

    from telegram import Update

    try:
        data = json.loads(body)
        Update.de_json(data, None)
    except (ValueError, TypeError, KeyError):
        raise InvalidInput("the request is not a Telegram update", code="invalid_payload") from None
    if not isinstance(data, dict) or "update_id" not in data:
        raise InvalidInput("the request is not a Telegram update", code="invalid_payload")
    if "message_reaction" in data:
        return _reaction(org_id, data)
    return _decision(org_id, data) if "callback_query" in data else _message(org_id, data)


async def receive_update(org_slug: str, body: bytes, headers: Mapping[str, str]) -> None:
    """`POST /api/v1/channels/telegram/{org_slug}`: verify the secret token, record the update once, hand it on."""
    opened = await configs.by_slug("telegram", org_slug)
    expected = opened.secrets.get("secret_token", "") if opened else ""
    given = headers.get(SECRET_HEADER, "")
    if opened is None or not expected or not hmac.compare_digest(given.encode(), expected.encode()):
        raise Unauthorized("the Telegram secret token is missing or wrong", code="secret_token_invalid")
    org_id = opened.config.org_id
    item = parse_update(org_id, body)
    if item is None:
        return
    async with org_transaction(org_id) as conn:
        fresh = await thread_store.first_seen(conn, org_id, "telegram", item.event_id, item.sender)
    if fresh:
        await jobs.dispatch(item)
