"""E-mail answers to approvals are verified (issue 34: "each verified to come from someone allowed to answer"). A
`From` line is anyone's to write: the approval's mail asks to be answered at an address carrying a code made for
that approval and that member (`agent+<code>@domain`), and only a reply to it decides; where SES gives verdicts,
SPF and DKIM must pass too. A reply that does not count decides nothing, gets one short reply saying why, and is in
the approval's audit trail. And a decision made after the thread's follower is gone (its lifetime,
`PA_SSE_MAX_LIFETIME_SECONDS`, shortened here) still gets its answer into the thread, decided in the web chat or by
e-mail."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import psycopg
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.channels import admin, email_channel, email_proof, links, senders
from personal_agent.db import org_transaction
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.email_replies import body, replies_to, reply_mail
from tests.scripted import scripted_model

SENDER = "alice@example.com"
PASSING = {"spf": "PASS", "dkim": "PASS", "dmarc": "PASS", "virus": "PASS"}


async def send_script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    if not returns:
        args = '{"to": "team@example.com", "text": "hello"}'
        yield {0: DeltaToolCall(name="send_demo_message", json_args=args, tool_call_id="send_1")}
    else:
        yield f"Sent: {returns[-1].content}"


@pytest.fixture
def sending_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The built-in assistant's model for the channel's runs: it asks to send a message (an act: approval needed)."""
    with scripted_model(send_script) as (model, _):
        monkeypatch.setenv("PA_DEFAULT_MODEL", model)
        get_settings.cache_clear()
        try:
            yield
        finally:
            get_settings.cache_clear()


async def _channel(tenant: Any) -> tuple[Principal, str]:
    """The tenant's e-mail channel, and the member linked to SENDER."""
    principal = Principal(tenant.user_id, tenant.org_id, tenant.slug, frozenset({"org-admin"}), tenant.subject)
    address = f"agent-{uuid.uuid4().hex[:8]}@acme.example.com"
    await admin.put_channel(principal, "email", address, None, {})
    async with org_transaction(tenant.org_id) as conn:
        code = await senders.link_code(conn, tenant.org_id, "email", SENDER, SENDER)
    await links.confirm(principal, code)
    return principal, address


async def _asked(address: str) -> tuple[str, Any]:
    """A new thread whose run waits for approval: its first message's id, and the approval's mail."""
    first = f"<act-{uuid.uuid4().hex[:8]}@example.com>"
    mail = reply_mail(SENDER, address, "Please send", first, "send hello to the team", sender_name="Alice")
    assert await email_channel.receive(mail.as_bytes(), [address])
    aws = str(get_settings().aws_endpoint_url)
    (asked,) = await asyncio.to_thread(replies_to, aws, first, "waiting for your approval")
    return first, asked


async def _answer(
    to: str, first: str, asked: Any, verdicts: dict[str, str] | None = None, text: str = "approve"
) -> str:
    """A reply in the thread sent to `to`; its Message-ID."""
    message_id = f"<re-{uuid.uuid4().hex[:8]}@example.com>"
    mail = reply_mail(SENDER, to, "Re: Please send", message_id, text, f"{first} {asked['Message-ID']}")
    await email_channel.receive(mail.as_bytes(), [to], verdicts)
    return message_id


def _audit(admin_url: str, approval_id: str) -> list[tuple[str, dict[str, Any]]]:
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute(
            "SELECT action, detail FROM approval_audit WHERE approval_id = %s ORDER BY id", [approval_id]
        ).fetchall()
    return [(r[0], r[1]) for r in rows]


async def _pending(client: httpx.AsyncClient, tenant: Any) -> list[dict[str, Any]]:
    listed = await client.get("/api/v1/approvals", params={"status": "pending"}, headers=auth_headers(tenant))
    items: list[dict[str, Any]] = listed.json()["items"]
    return items


async def test_only_a_reply_to_the_approvals_own_address_decides_it(
    make_tenant: Any, client: httpx.AsyncClient, admin_url: str, sending_model: None
) -> None:
    tenant = make_tenant(("org-admin",))
    _, address = await _channel(tenant)
    aws = str(get_settings().aws_endpoint_url)
    first, asked = await _asked(address)
    reply_to = str(asked["Reply-To"])
    assert reply_to != address and email_proof.base_address(reply_to) == address, reply_to
    assert asked["To"] == SENDER
    (approval,) = await _pending(client, tenant)

    # A forged From to the channel's own address (nothing proves who wrote it), the code of another approval, and
    # the right code without passing DKIM (SES's verdicts): each decides nothing and is told why, briefly.
    forged = await _answer(address, first, asked)
    key = await email_proof.key_of(tenant.org_id)
    assert key is not None
    other = email_proof.reply_address(address, email_proof.code(key, uuid.uuid4(), SENDER))
    wrong_code = await _answer(other, first, asked)
    gray = await _answer(reply_to, first, asked, {**PASSING, "dkim": "GRAY"})
    for message_id, why in ((forged, "not a reply"), (wrong_code, "not a reply"), (gray, "SPF and DKIM")):
        (told,) = await asyncio.to_thread(replies_to, aws, message_id, "decided nothing")
        assert why in body(told) and len(body(told)) < 300, body(told)
    # DKIM failing outright: SES's verdict drops the message before anything is recorded.
    failed = reply_mail(SENDER, reply_to, "Re: Please send", "<failed@example.com>", "approve", first)
    assert not await email_channel.receive(failed.as_bytes(), [reply_to], {**PASSING, "dkim": "FAIL"})
    assert [a["id"] for a in await _pending(client, tenant)] == [approval["id"]]
    refused = [d for action, d in _audit(admin_url, approval["id"]) if action == "unverified"]
    assert len(refused) == 3 and all(d["sender"] == SENDER and d["channel"] == "email" for d in refused), refused

    # The reply to the approval's own address, with passing verdicts, decides it; the answer follows in the thread.
    yes = await _answer(reply_to, first, asked, PASSING)
    await asyncio.to_thread(replies_to, aws, yes, "Approved by")
    assert await _pending(client, tenant) == []
    (done,) = await asyncio.to_thread(replies_to, aws, first, "Sent: ")
    assert "team@example.com" in body(done)


async def _follower_gone(admin_url: str, first_run: str, timeout: float = 60) -> None:
    """Wait until the thread's follower has let go of the run (its lifetime is over)."""
    deadline = time.monotonic() + timeout
    while True:
        with psycopg.connect(admin_url) as conn:
            row = conn.execute("SELECT held_until FROM channel_follows WHERE run_id = %s", [first_run]).fetchone()
        if row is not None and row[0] is None:
            return
        assert time.monotonic() < deadline, row
        await asyncio.sleep(0.2)


async def test_a_decision_after_the_follower_is_gone_still_answers_in_the_thread(
    make_tenant: Any, client: httpx.AsyncClient, admin_url: str, sending_model: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PA_SSE_MAX_LIFETIME_SECONDS", "5")
    get_settings.cache_clear()
    tenant = make_tenant(("org-admin",))
    _, address = await _channel(tenant)
    aws = str(get_settings().aws_endpoint_url)

    # Decided by e-mail, after the thread's follower ended.
    first, asked = await _asked(address)
    (approval,) = await _pending(client, tenant)
    await _follower_gone(admin_url, approval["run_id"])
    yes = await _answer(str(asked["Reply-To"]), first, asked)
    await asyncio.to_thread(replies_to, aws, yes, "Approved by")
    (done,) = await asyncio.to_thread(replies_to, aws, first, "Sent: ")
    assert "team@example.com" in body(done)
