"""Telegram: an org's bot posts its updates to `POST /api/v1/channels/telegram/{org_slug}` with the secret token
it was given at `setWebhook` (`X-Telegram-Bot-Api-Secret-Token`, compared in constant time: 401 otherwise, nothing
stored or started). Private chats and groups (in a group only messages that mention the bot); inline keyboards for
approvals (`callback_query`); answers sent and edited through the Bot API (`python-telegram-bot`, at
`PA_TELEGRAM_API_URL`)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from personal_agent.channels import configs, jobs, thread_store
from personal_agent.channels.inbound import Decision, Inbound, Replier
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput, Unauthorized
from personal_agent.settings import get_settings

MAX_TEXT = 4096  # Telegram's limit for a message's text
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


def parse_update(org_id: UUID, body: bytes) -> Inbound | Decision | None:
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


async def addressed(inbound: Inbound, replier: Replier) -> Inbound | None:
    """In a group, only a message that mentions the bot is for it (the mention taken out); a private chat's all are."""
    if not inbound.reply.get("group"):
        return inbound
    assert isinstance(replier, TelegramReplier)
    mention = "@" + await replier.username()
    if mention.lower() not in inbound.text.lower():
        return None
    start = inbound.text.lower().index(mention.lower())
    text = (inbound.text[:start] + inbound.text[start + len(mention) :]).strip()
    return inbound.model_copy(update={"text": text})


class TelegramReplier(Replier):
    """Answers in the chat with the org's bot, through the Bot API."""

    def __init__(self, bot_token: str, reply: dict[str, Any]) -> None:
        from telegram import Bot

        self.bot = Bot(bot_token, base_url=get_settings().telegram_api_url.rstrip("/") + "/bot")
        self.chat_id = reply.get("chat_id")
        self.reply_to = reply.get("reply_to")
        self.callback_query_id = reply.get("callback_query_id")
        self.ready = False

    async def _ready(self) -> None:
        if not self.ready:
            await self.bot.initialize()  # its HTTP client, and `getMe` (the bot's username)
            self.ready = True

    async def close(self) -> None:
        if self.ready:
            await self.bot.shutdown()

    async def username(self) -> str:
        await self._ready()
        return str(self.bot.username)

    async def post(self, text: str) -> str:
        await self._ready()
        sent = await self.bot.send_message(self.chat_id, text[:MAX_TEXT], reply_to_message_id=self.reply_to)
        return str(sent.message_id)

    async def update(self, handle: str, text: str) -> None:
        await self._ready()
        await self.bot.edit_message_text(text[:MAX_TEXT], chat_id=self.chat_id, message_id=int(handle))

    async def ask_approval(self, approval: dict[str, Any]) -> None:
        from telegram import InlineKeyboardButton, InlineKeyboardMarkup

        await self._ready()
        approval_id = approval["approval_id"]
        keys = InlineKeyboardMarkup(
            [[
                InlineKeyboardButton("Approve", callback_data=f"approve:{approval_id}"),
                InlineKeyboardButton("Deny", callback_data=f"deny:{approval_id}"),
            ]]
        )
        text = f"{approval.get('tool')} is waiting for your approval: {approval.get('args')}"[:MAX_TEXT]
        await self.bot.send_message(self.chat_id, text, reply_markup=keys)

    async def notice(self, text: str) -> None:
        await self._ready()
        if self.callback_query_id:  # a button press is answered, so the client stops its spinner
            await self.bot.answer_callback_query(str(self.callback_query_id), text[:200])
        await self.post(text)
