"""Proof that an e-mail answering an approval or a question comes from the person it was asked of. A `From` line is
anyone's to write, so it proves nothing: the mail asking carries a code made for that approval (or question) and
that address, in the address it asks to be answered at (`agent+<code>@domain`, its `Reply-To`), and only a reply
to that address counts; where SES gave verdicts (on AWS), SPF and DKIM must both PASS as well. The code is an
HMAC-SHA256 of the approval's id and the address, under a key of the org's e-mail channel (sealed with its secrets,
made at first use), compared in constant time."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from personal_agent.approvals import store as approval_store
from personal_agent.channels import config_store, configs, thread_store
from personal_agent.channels.channel_secrets import seal
from personal_agent.channels.inbound import Decision, Inbound, Replier
from personal_agent.db import org_transaction

log = logging.getLogger("personal_agent.channels")

KEY_NAME = "answer_key"
CODE_CHARS = 20  # 100 bits of lowercase base32: what a mail system keeps of an address's local part
NOT_PASSED = "its sender could not be verified (SPF and DKIM did not both pass)"
NOT_A_REPLY = "it is not a reply to the e-mail that asked (only a reply to that e-mail's own address counts)"


def code(key: str, answer_id: UUID | str, address: str) -> str:
    """The code the mail asking about `answer_id` carries for `address`."""
    mac = hmac.new(key.encode(), f"{answer_id}:{address.strip().lower()}".encode(), hashlib.sha256).digest()
    return base64.b32encode(mac).decode().lower()[:CODE_CHARS]


def reply_address(address: str, answer_code: str) -> str:
    """The channel's address with the code as its sub-address (`agent+<code>@domain`)."""
    local, _, domain = address.partition("@")
    return f"{local}+{answer_code}@{domain}"


def base_address(address: str) -> str:
    """An address without its sub-address (`agent+x@domain` -> `agent@domain`)."""
    local, at, domain = address.strip().lower().partition("@")
    return f"{local.partition('+')[0]}{at}{domain}"


def codes_in(addresses: Iterable[str], channel_address: str) -> tuple[str, ...]:
    """The codes a message carries: the sub-addresses of the channel's address it was sent to."""
    found = []
    for address in addresses:
        local = address.strip().lower().partition("@")[0]
        if "+" in local and base_address(address) == channel_address.lower():
            found.append(local.partition("+")[2])
    return tuple(dict.fromkeys(found))


def answers(key: str, answer_id: UUID | str, address: str, codes: Iterable[str]) -> bool:
    """Whether one of `codes` is the code of `answer_id` for `address` (each compared in constant time)."""
    expected = code(key, answer_id, address).encode()
    matched = False
    for given in codes:
        matched |= hmac.compare_digest(expected, given.encode())
    return matched


def verdicts_pass(verdicts: dict[str, str] | None) -> bool:
    """No verdicts (pa dev's SMTP: the code alone proves it), or SPF and DKIM both PASS."""
    return verdicts is None or all(verdicts.get(name) == "PASS" for name in ("spf", "dkim"))


async def key_of(org_id: UUID) -> str | None:
    """The org's e-mail channel's key, made and sealed with its secrets the first time (None: no e-mail channel)."""
    opened = await configs.of_org(org_id, "email")
    if opened is None:
        return None
    if opened.secrets.get(KEY_NAME):
        return opened.secrets[KEY_NAME]
    sealed = await seal(org_id, "email", {**opened.secrets, KEY_NAME: secrets.token_urlsafe(32)})
    async with org_transaction(org_id) as conn:
        await config_store.set_secrets_if_none(conn, "email", sealed)
    opened = await configs.of_org(org_id, "email")  # this key, or the one another process made first
    return opened.secrets.get(KEY_NAME) if opened is not None else None


def _audit_detail(sender: str, why: str) -> dict[str, Any]:
    """What the approval audit trail keeps of an e-mail answer that did not count."""
    return {"reason": f"an e-mail answer from {sender} did not count: {why}", "channel": "email", "sender": sender}


async def proven(item: Inbound | Decision, ids: list[UUID], replier: Replier) -> list[UUID]:
    """Of the approvals or questions `ids` a message would answer, those it proves it answers (all of them for the
    channels that sign every request). An e-mail proving none decided nothing: its sender is told why in one line,
    the channel's log says `unverified`, and each approval's (or question's) audit trail keeps it."""
    if item.kind != "email" or not ids:
        return ids
    why = NOT_PASSED if not verdicts_pass(item.verdicts) else NOT_A_REPLY
    key = await key_of(item.org_id) if why == NOT_A_REPLY else None
    found = [i for i in ids if key is not None and answers(key, i, item.sender, item.codes)]
    if found:
        return found
    async with org_transaction(item.org_id) as conn:
        for answer_id in ids:
            await approval_store.audit(
                conn, item.org_id, answer_id, None, "unverified", _audit_detail(item.sender, why)
            )
        await thread_store.set_status(conn, item.kind, item.event_id, "unverified")
    log.warning("an e-mail answer did not count: %s", why, extra={"event_id": item.event_id})
    await replier.notice(f"This e-mail decided nothing: {why}.")
    return []
