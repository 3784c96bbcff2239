"""How each channel answers in a thread (`inbound.Replier`): Slack through the Web API (`slack_sdk`'s WebClient at
`PA_SLACK_API_URL`, the bot token), Telegram through the Bot API (python-telegram-bot's `Bot` at
`PA_TELEGRAM_API_URL`), e-mail threaded through SES (from the outputs' sender, the channel's address to reply to)."""

from __future__ import annotations

import asyncio
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any
from uuid import UUID

from personal_agent.channels import email_proof
from personal_agent.channels.inbound import Inbound, Replier
from personal_agent.channels.long_posts import Pieces, retrying, slack_wait, telegram_wait
from personal_agent.channels.slack import MAX_TEXT as SLACK_MAX_TEXT
from personal_agent.channels.slack import approval_blocks
from personal_agent.settings import get_settings

TELEGRAM_MAX_TEXT = 4096  # Telegram's limit for a message's text


class SlackReplier(Replier):
    """Answers in the thread with the bot token, through the Web API: a long answer in pieces (`long_posts`), a call
    Slack refuses for its rate limit made again after its `Retry-After`."""

    def __init__(self, bot_token: str, reply: dict[str, Any]) -> None:
        from slack_sdk import WebClient

        self.client = WebClient(token=bot_token, base_url=get_settings().slack_api_url)
        self.channel = str(reply.get("channel"))
        self.thread_ts: str | None = reply.get("thread_ts")
        self.pieces = Pieces(SLACK_MAX_TEXT, self._post, self._edit)

    async def _call(self, method: Any, **params: Any) -> Any:
        return await retrying(lambda: asyncio.to_thread(method, **params), slack_wait)

    async def _post(self, text: str, **more: Any) -> str:
        post = self.client.chat_postMessage
        sent = await self._call(
            post, channel=self.channel, thread_ts=self.thread_ts, text=text[:SLACK_MAX_TEXT], **more
        )
        ts = str(sent["ts"])
        self.thread_ts = self.thread_ts or ts  # a command's first answer starts the thread the rest go into
        return ts

    async def _edit(self, handle: str, text: str) -> None:
        await self._call(self.client.chat_update, channel=self.channel, ts=handle, text=text[:SLACK_MAX_TEXT])

    async def post(self, text: str) -> str:
        return await self.pieces.post(text)

    def post_key(self, handle: str) -> str:
        return f"{self.channel}:{handle}"

    async def update(self, handle: str, text: str) -> None:
        await self.pieces.update(handle, text)

    async def ask_approval(self, approval: dict[str, Any]) -> None:
        await self._post(f"{approval.get('tool')} is waiting for your approval", blocks=approval_blocks(approval))


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
    """Answers in the chat with the org's bot, through the Bot API: a long answer in pieces (`long_posts`), a call
    Telegram refuses for its rate limit made again after its `retry_after`."""

    def __init__(self, bot_token: str, reply: dict[str, Any]) -> None:
        from telegram import Bot

        self.bot = Bot(bot_token, base_url=get_settings().telegram_api_url.rstrip("/") + "/bot")
        self.chat_id: int | str = reply.get("chat_id") or ""
        self.reply_to = reply.get("reply_to")
        self.callback_query_id = reply.get("callback_query_id")
        self.ready = False
        self.pieces = Pieces(TELEGRAM_MAX_TEXT, self._send, self._edit)

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

    async def _send(self, text: str, **more: Any) -> str:
        await self._ready()
        text = text[:TELEGRAM_MAX_TEXT]
        send = self.bot.send_message
        sent = await retrying(
            lambda: send(self.chat_id, text, reply_to_message_id=self.reply_to, **more), telegram_wait
        )
        return str(sent.message_id)

    async def _edit(self, handle: str, text: str) -> None:
        await self._ready()
        edit = self.bot.edit_message_text
        await retrying(
            lambda: edit(text[:TELEGRAM_MAX_TEXT], chat_id=self.chat_id, message_id=int(handle)), telegram_wait
        )

    async def post(self, text: str) -> str:
        return await self.pieces.post(text)

    def post_key(self, handle: str) -> str:
        return f"{self.chat_id}:{handle}"

    async def update(self, handle: str, text: str) -> None:
        await self.pieces.update(handle, text)

    async def ask_approval(self, approval: dict[str, Any]) -> None:
        from telegram import InlineKeyboardButton, InlineKeyboardMarkup

        await self._ready()
        approval_id = approval["approval_id"]
        keys = InlineKeyboardMarkup(
            [
                [
                    InlineKeyboardButton("Approve", callback_data=f"approve:{approval_id}"),
                    InlineKeyboardButton("Deny", callback_data=f"deny:{approval_id}"),
                ]
            ]
        )
        text = f"{approval.get('tool')} is waiting for your approval: {approval.get('args')}"[:TELEGRAM_MAX_TEXT]
        await retrying(lambda: self.bot.send_message(self.chat_id, text, reply_markup=keys), telegram_wait)

    async def notice(self, text: str) -> None:
        await self._ready()
        if self.callback_query_id:  # a button press is answered, so the client stops its spinner
            await self.bot.answer_callback_query(str(self.callback_query_id), text[:200])
        await self.post(text)


class EmailReplier(Replier):
    """Answers by e-mail in the sender's thread, sent through SES once the answer is whole. A mail asking for an
    approval or an answer gives an address of its own to reply to (`email_proof`): only a reply to it counts."""

    streams = False

    def __init__(self, address: str, reply: dict[str, Any], org_id: UUID | None = None) -> None:
        self.address = address
        self.reply = reply
        self.org_id = org_id

    def _send(self, text: str, reply_to: str | None = None) -> str:
        from personal_agent.aws_clients import aws_client

        out = EmailMessage()
        subject = self.reply.get("subject") or "Your message"
        out["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
        out["From"], out["To"] = get_settings().output_email_from, self.reply["to"]
        out["Reply-To"] = reply_to or self.address
        out["Message-ID"] = make_msgid(domain=self.address.partition("@")[2] or None)
        out["In-Reply-To"], out["References"] = self.reply["in_reply_to"], self.reply["references"]
        out["Auto-Submitted"] = "auto-replied"  # RFC 3834: other responders do not answer it
        out.set_content(text)
        aws_client("ses").send_raw_email(RawMessage={"Data": out.as_bytes()})
        return str(out["Message-ID"])

    async def post(self, text: str) -> str:
        return await asyncio.to_thread(self._send, text)

    async def _asking(self, answer_id: str, text: str) -> None:
        """Send `text` with the address made for `answer_id` and the member it was sent to, to reply to."""
        key = await email_proof.key_of(self.org_id) if self.org_id is not None else None
        if key is None:  # no channel any more: a reply could not count, so none is asked for
            await self.post(text)
            return
        reply_to = email_proof.reply_address(self.address, email_proof.code(key, answer_id, self.reply["to"]))
        await asyncio.to_thread(self._send, f"{text}\n\nOnly a reply to this e-mail counts.", reply_to)

    async def ask_approval(self, approval: dict[str, Any]) -> None:
        await self._asking(
            str(approval["approval_id"]),
            f"{approval.get('tool')} is waiting for your approval: {approval.get('args')}\n\n"
            "Reply to this e-mail with the word approve or deny.",
        )

    async def ask_question(self, question: dict[str, Any]) -> None:
        choices = question.get("choices")
        how = f"Reply to this e-mail with one of: {', '.join(choices)}." if choices else "Reply to this e-mail."
        await self._asking(str(question["question_id"]), f"{question.get('question')}\n\n{how}")
