"""The e-mail channel's reading of a raw RFC 822 message (issue 34): its thread is the first id it references, the
quoted message a reply carries is not the new text, a reply starting with approve or deny is a decision in its
thread, and automatic mail (auto-replies, bounces, lists) is dropped unread so two responders cannot loop."""

from __future__ import annotations

import asyncio
import uuid

from personal_agent.channels import email_channel
from personal_agent.channels.inbound import Decision, Inbound

ORG = uuid.uuid4()


def _raw(body: str, **headers: str) -> bytes:
    lines = [
        "From: Alice <Alice@Example.com>",
        "To: agent@acme.example.com",
        "Subject: Invoices",
        "Message-ID: <m2@example.com>",
    ]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n" + body.replace("\n", "\r\n")).encode()


def test_a_new_message_is_its_own_thread_and_a_reply_joins_the_first_it_references() -> None:
    first = email_channel.as_item(ORG, email_channel.parse(_raw("what is due?")), verified=False)
    assert isinstance(first, Inbound) and first.thread_key == "<m2@example.com>" and first.sender == "alice@example.com"
    assert first.reply["references"] == "<m2@example.com>" and first.reply["in_reply_to"] == "<m2@example.com>"
    reply = email_channel.parse(
        _raw("and the next?\n\nOn Monday Bob wrote:\n> what is due?", References="<m0@x> <m1@x>", In_Reply_To="<m1@x>")
    )
    item = email_channel.as_item(ORG, reply, verified=True)
    assert isinstance(item, Inbound) and item.thread_key == "<m0@x>" and item.text == "and the next?"
    assert item.verified_sender and item.reply["references"] == "<m0@x> <m1@x> <m2@example.com>"


def test_approve_or_deny_in_a_thread_is_a_decision_but_not_in_a_new_message() -> None:
    decided = email_channel.as_item(ORG, email_channel.parse(_raw("Approve, thanks", References="<m0@x>")), False)
    assert isinstance(decided, Decision) and decided.decision == "approve" and decided.approval_id is None
    assert decided.thread_key == "<m0@x>"
    denied = email_channel.as_item(ORG, email_channel.parse(_raw("deny\n> approve", In_Reply_To="<m0@x>")), False)
    assert isinstance(denied, Decision) and denied.decision == "deny"
    fresh = email_channel.as_item(ORG, email_channel.parse(_raw("approve the budget please")), False)
    assert isinstance(fresh, Inbound)  # a new conversation has nothing to decide: it is a message
    assert isinstance(
        email_channel.as_item(ORG, email_channel.parse(_raw("approvedly", References="<m0@x>")), False), Inbound
    )


def test_automatic_mail_is_dropped_before_anything_is_looked_up() -> None:
    for headers in ({"Auto_Submitted": "auto-replied"}, {"Precedence": "bulk"}, {"List_Id": "<team.example.com>"}):
        message = email_channel.parse(_raw("I am out of office", **headers))
        assert email_channel.automatic(message), headers
        assert asyncio.run(email_channel.receive(_raw("out of office", **headers), ["agent@acme.example.com"])) is False
    assert not email_channel.automatic(email_channel.parse(_raw("hello", Auto_Submitted="no")))


def test_failing_verdicts_and_oversized_mail_are_dropped_unread() -> None:
    raw = _raw("hello")
    assert asyncio.run(email_channel.receive(raw, [], {"spf": "PASS", "dkim": "FAIL"})) is False
    assert asyncio.run(email_channel.receive(b"x" * (email_channel.MAX_BYTES + 1), [])) is False
