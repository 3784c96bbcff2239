"""E-mail in on AWS: SES's receipt rule stores the message in S3 (`PA_CHANNEL_EMAIL_BUCKET`, under `inbound/`), then
invokes the channels function with the receipt (recipients, SPF/DKIM/DMARC verdicts). A failing verdict drops the
message (logged); passing SPF and DKIM make the sender verified."""

from __future__ import annotations

import asyncio
from typing import Any

from personal_agent.channels.email_channel import receive
from personal_agent.settings import get_settings

PREFIX = "inbound/"


def is_ses_event(event: dict[str, Any]) -> bool:
    records = event.get("Records") or []
    return bool(records) and records[0].get("eventSource") == "aws:ses"


def _verdicts(receipt: dict[str, Any]) -> dict[str, str]:
    names = {"spf": "spfVerdict", "dkim": "dkimVerdict", "dmarc": "dmarcVerdict", "virus": "virusVerdict"}
    return {k: str((receipt.get(v) or {}).get("status", "GRAY")) for k, v in names.items()}


def _read(key: str) -> bytes:
    from personal_agent.aws_clients import aws_client

    body: bytes = aws_client("s3").get_object(Bucket=get_settings().channel_email_bucket, Key=key)["Body"].read()
    return body


async def receive_ses(event: dict[str, Any]) -> int:
    """Take each message of an SES receipt event; how many were handed on."""
    taken = 0
    for record in event.get("Records", []):
        ses = record.get("ses") or {}
        mail, receipt = ses.get("mail") or {}, ses.get("receipt") or {}
        raw = await asyncio.to_thread(_read, PREFIX + str(mail.get("messageId", "")))
        taken += await receive(raw, list(receipt.get("recipients") or []), _verdicts(receipt))
    return taken
