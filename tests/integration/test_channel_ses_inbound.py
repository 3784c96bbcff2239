"""E-mail in on AWS (issue 34), against moto's S3: SES's receipt rule stored the message under `inbound/` and invokes
the channels function with its verdicts; a message failing SPF, DKIM, DMARC or the virus scan is dropped before
anything is recorded, as is one for an address no org has; the SES event's shape is told apart from the others."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from personal_agent.channels import admin, ses_inbound
from personal_agent.channels.config_store import ChannelKind
from personal_agent.db import org_transaction
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings


@pytest.fixture
def bucket(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The bucket SES stores inbound mail in (moto), named to the channels' settings for the test."""
    name = f"pa-inbound-{uuid.uuid4().hex[:8]}"
    boto3.client("s3").create_bucket(Bucket=name)
    monkeypatch.setenv("PA_CHANNEL_EMAIL_BUCKET", name)
    get_settings.cache_clear()
    yield name
    monkeypatch.delenv("PA_CHANNEL_EMAIL_BUCKET")
    get_settings.cache_clear()


def _event(message_id: str, recipient: str, **verdicts: str) -> dict[str, Any]:
    receipt = {"recipients": [recipient]}
    for name in ("spf", "dkim", "dmarc", "virus"):
        receipt[f"{name}Verdict"] = {"status": verdicts.get(name, "PASS")}  # type: ignore[assignment]
    return {"Records": [{"eventSource": "aws:ses", "ses": {"mail": {"messageId": message_id}, "receipt": receipt}}]}


def _raw(recipient: str, message_id: str) -> bytes:
    return (
        f"From: someone@example.com\r\nTo: {recipient}\r\nSubject: hi\r\nMessage-ID: <{message_id}@example.com>\r\n"
        "\r\nwhat time is it?\r\n"
    ).encode()


async def _events(org_id: uuid.UUID, kind: ChannelKind) -> list[str]:
    async with org_transaction(org_id) as conn:
        rows = await (await conn.execute("SELECT event_id FROM channel_events WHERE kind = %s", [kind])).fetchall()
    return [r["event_id"] for r in rows]


async def test_failing_verdicts_and_unknown_addresses_are_dropped(make_tenant: Any, bucket: str) -> None:
    tenant = make_tenant(("org-admin",))
    principal = Principal(tenant.user_id, tenant.org_id, tenant.slug, frozenset({"org-admin"}), tenant.subject)
    address = f"agent-{uuid.uuid4().hex[:8]}@acme.example.com"
    await admin.put_channel(principal, "email", address, None, {})
    for message_id in ("failing", "elsewhere"):
        to = address if message_id == "failing" else "nobody@elsewhere.example.com"
        boto3.client("s3").put_object(Bucket=bucket, Key=f"inbound/{message_id}", Body=_raw(to, message_id))

    assert ses_inbound.is_ses_event(_event("failing", address))
    assert not ses_inbound.is_ses_event({"requestContext": {}}) and not ses_inbound.is_ses_event({"Records": []})
    for verdict in ("spf", "dkim", "dmarc", "virus"):
        assert await ses_inbound.receive_ses(_event("failing", address, **{verdict: "FAIL"})) == 0
    assert await ses_inbound.receive_ses(_event("elsewhere", "nobody@elsewhere.example.com")) == 0
    assert await _events(tenant.org_id, "email") == []  # nothing recorded, nothing started
