"""Sending one delivery to one output: a callback URL (a Standard Webhooks signed POST), a Slack or Teams
incoming webhook (a text message), or an e-mail through SES. Every URL passes the same address checks as
`web_fetch` (public internet only, unless an admin allow-lists the host) and is connected to at the checked
address; redirects are not followed (a callback that moved is a failed delivery, with the reason)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from personal_agent.aws_clients import aws_client
from personal_agent.net.public_address import AddressRefused, checked_address, parse_allow_hosts
from personal_agent.outbox import http_post
from personal_agent.outbox.http_post import Sent
from personal_agent.settings import get_settings

if TYPE_CHECKING:  # imported where a URL is parsed or sent (off the API function's cold start)
    import httpx


def allow_hosts() -> frozenset[str]:
    return parse_allow_hosts(get_settings().output_allow_hosts)


async def check_url(url: str) -> httpx.URL:
    """The URL, if an output may call it; raises `AddressRefused` with the reason otherwise."""
    import httpx

    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL:
        raise AddressRefused("the URL is not valid") from None
    await checked_address(parsed, allow_hosts(), verb="called")
    return parsed


async def post_checked(url: str, body: bytes, headers: dict[str, str]) -> Sent:
    """POST to an output's URL, checked against the outputs' allow-list."""
    return await http_post.post_checked(url, body, headers, allow_hosts())


async def post_signed(url: str, secret: str, message_id: str, body: dict[str, Any]) -> Sent:
    """A Standard Webhooks delivery: `webhook-id` (the same on every retry), `webhook-timestamp`, signature."""
    from standardwebhooks import Webhook

    data = json.dumps(body, separators=(",", ":"), default=str)
    now = datetime.now(UTC)
    headers = {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, now, data),
    }
    return await post_checked(url, data.encode(), headers)


async def post_text(url: str, text: str) -> Sent:
    """A Slack or Teams incoming webhook: both take `{"text": ...}`."""
    return await post_checked(url, json.dumps({"text": text}).encode(), {})


def _send_email(to: str, subject: str, text: str) -> None:
    settings = get_settings()
    aws_client("ses").send_email(
        Source=settings.output_email_from,
        Destination={"ToAddresses": [to]},
        Message={"Subject": {"Data": subject[:200]}, "Body": {"Text": {"Data": text}}},
    )


async def send_email(to: str, subject: str, text: str) -> Sent:
    try:
        await asyncio.to_thread(_send_email, to, subject, text)
    except Exception as exc:  # botocore's ClientError and connection errors: the reason goes to the log row
        return Sent(False, None, f"{type(exc).__name__}: {str(exc)[:200]}")
    return Sent(True)
