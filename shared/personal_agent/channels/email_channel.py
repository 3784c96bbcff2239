"""E-mail in: a raw RFC 822 message (from SES's receipt rule on AWS, from `pa dev`'s SMTP server locally) to an
org's inbound address. Its thread is its first `References` id (else `In-Reply-To`, else its own `Message-ID`);
a reply whose first word is `approve` or `deny` decides approvals of the thread; anything else is a message. A reply
answers an approval or a question only when sent to the address the asking mail gave (`agent+<code>@domain`, see
`email_proof`) and, where SES gave verdicts, with SPF and DKIM passing. A failing SES verdict drops the message
(logged); without verdicts (locally) the message enters the run untrusted. Its attachments become the chat's
(`email_files`). Answers go back threaded (`In-Reply-To`, `References`, `Re:`) through SES, from the outputs' sender
address with the channel's address to reply to."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, make_msgid, parseaddr
from uuid import UUID

from personal_agent.channels import configs, email_files, email_proof, jobs, thread_store
from personal_agent.channels.inbound import Decision, Inbound
from personal_agent.db import org_transaction

log = logging.getLogger("personal_agent.channels")
MAX_BYTES = 10 * 1024 * 1024
_QUOTE_START = re.compile(r"^On .+ wrote:\s*$")
_DECISION = re.compile(r"^\s*(approve|deny)\b", re.IGNORECASE)


def parse(raw: bytes) -> EmailMessage:
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    return message


def new_text(message: EmailMessage) -> str:
    """The plain-text body without the quoted message a reply carries."""
    part = message.get_body(preferencelist=("plain",))
    body = part.get_content() if part is not None else ""
    lines = []
    for line in str(body).splitlines():
        if line.startswith(">") or _QUOTE_START.match(line):
            break
        lines.append(line)
    return "\n".join(lines).strip()


def _ids(value: str | None) -> list[str]:
    return re.findall(r"<[^<>\s]+>", value or "")


def thread_of(message: EmailMessage) -> str:
    references = _ids(message.get("References")) or _ids(message.get("In-Reply-To"))
    own = _ids(message.get("Message-ID"))
    return (references or own or ["<no-id>"])[0]


def automatic(message: EmailMessage) -> bool:
    """An auto-reply, a bounce or a list's mail (RFC 3834): never answered, so two responders cannot loop."""
    submitted = str(message.get("Auto-Submitted", "no")).strip().lower()
    precedence = str(message.get("Precedence", "")).strip().lower()
    return submitted != "no" or precedence in ("bulk", "junk", "list") or "List-Id" in message


def recipients(message: EmailMessage) -> list[str]:
    fields = [str(v) for k in ("To", "Cc", "Delivered-To") for v in message.get_all(k, [])]
    return [address.lower() for _, address in getaddresses(fields) if address]


def as_item(
    org_id: UUID,
    message: EmailMessage,
    verified: bool,
    address: str = "",
    envelope_to: Iterable[str] = (),
    verdicts: dict[str, str] | None = None,
) -> Inbound | Decision:
    """The message as the channel layer's value: a decision when it answers approvals, else a message; with the
    answer codes it carries (sent to the channel's `address` with a sub-address) and SES's `verdicts`."""
    codes = email_proof.codes_in([*envelope_to, *recipients(message)], address) if address else ()
    sender = parseaddr(str(message.get("From", "")))[1].lower()
    own_id = (_ids(message.get("Message-ID")) or [make_msgid()])[0]
    references = " ".join([*_ids(message.get("References")), own_id])
    reply = {"to": sender, "subject": str(message.get("Subject", "")), "in_reply_to": own_id, "references": references}
    text, thread = new_text(message), thread_of(message)
    decided = _DECISION.match(text)
    if decided and thread != own_id:
        decision = "approve" if decided.group(1).lower() == "approve" else "deny"
        return Decision(
            kind="email", org_id=org_id, event_id=own_id, sender=sender, sender_label=sender, approval_id=None,
            decision=decision, thread_key=thread, reply=reply, codes=codes, verdicts=verdicts,
        )  # fmt: skip
    return Inbound(
        kind="email", org_id=org_id, event_id=own_id, sender=sender, sender_label=sender, thread_key=thread,
        text=text, verified_sender=verified, reply=reply, codes=codes, verdicts=verdicts,
    )  # fmt: skip


async def _channel_of(addresses: list[str]) -> configs.Opened | None:
    """The channel of the first address that is an org's (itself, or with an answer code as its sub-address)."""
    for address in addresses:
        for candidate in dict.fromkeys((address, email_proof.base_address(address))):
            opened = await configs.by_key("email", candidate)
            if opened is not None:
                return opened
    return None


async def receive(raw: bytes, envelope_to: list[str], verdicts: dict[str, str] | None = None) -> bool:
    """Take one e-mail (False: dropped - too big, for no org's address, failing SES verdicts, or seen before)."""
    if len(raw) > MAX_BYTES:
        log.warning("an inbound e-mail over %d bytes was dropped", MAX_BYTES)
        return False
    if verdicts and any(v == "FAIL" for v in verdicts.values()):
        log.warning("an inbound e-mail failing its SES verdicts was dropped: %s", verdicts)
        return False
    message = parse(raw)
    if automatic(message):
        log.info("an automatic inbound e-mail (an auto-reply or a list's) was dropped")
        return False
    opened = await _channel_of([*(a.lower() for a in envelope_to), *recipients(message)])
    if opened is None:
        log.info("an inbound e-mail for no configured address was dropped")
        return False
    verified = verdicts is not None and all(verdicts.get(k) == "PASS" for k in ("spf", "dkim"))
    address = opened.config.external_key
    item = as_item(opened.config.org_id, message, verified, address, envelope_to, verdicts)
    async with org_transaction(item.org_id) as conn:
        fresh = await thread_store.first_seen(conn, item.org_id, "email", item.event_id, item.sender)
    if fresh:
        if isinstance(item, Inbound):
            staged, refused = await email_files.stage(item.org_id, message)
            item = item.model_copy(update={"files": staged, "refused": refused})
        await jobs.dispatch(item)
    return fresh
