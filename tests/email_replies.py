"""The e-mail a stack sent through its SES emulator (moto's `/moto-api/data.json`), and the channel's replies among
them: what a person would find in their inbox, read the way the e-mail channel's tests read it."""

from __future__ import annotations

import re
import time
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

import httpx


def sent(aws_url: str) -> list[EmailMessage]:
    """Every raw message sent through the emulator at `aws_url`, oldest first."""
    data = httpx.get(f"{aws_url}/moto-api/data.json", timeout=30).json()
    raws = [m["raw_data"] for m in data.get("ses", {}).get("RawMessage", [])]
    parsed = [BytesParser(policy=policy.default).parsebytes(r.encode()) for r in raws]
    return [m for m in parsed if isinstance(m, EmailMessage)]


def body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    return str(part.get_content()) if part is not None else ""


def replies_to(aws_url: str, message_id: str, containing: str, timeout: float = 90) -> list[EmailMessage]:
    """The replies to `message_id` whose text matches `containing`, once there is one (polled: the emulator's outbox
    has nothing to wait on)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [m for m in sent(aws_url) if m["In-Reply-To"] == message_id and re.search(containing, body(m))]
        if found:
            return found
        assert time.monotonic() < deadline, [(m["In-Reply-To"], body(m)[:80]) for m in sent(aws_url)][-10:]
        time.sleep(0.2)


def reply_mail(
    sender: str, to: str, subject: str, message_id: str, text: str, references: str = "", sender_name: str = ""
) -> EmailMessage:
    """A person's mail (a reply when `references` names the thread's messages, the last one answered)."""
    message = EmailMessage()
    message["From"] = f"{sender_name} <{sender}>" if sender_name else sender
    message["To"], message["Subject"], message["Message-ID"] = to, subject, message_id
    if references:
        message["In-Reply-To"], message["References"] = references.split()[-1], references
    message.set_content(text)
    return message
