"""Channels function: Slack's and Telegram's signed webhooks (HTTP API, no JWT authorizer: each request proves itself
with its channel's signature), the runs it hands itself after the ack (async invokes), and SES's inbound e-mail."""

from __future__ import annotations

from typing import Any

from personal_agent.channels.handler import handle
from personal_agent.observability import instrument


@instrument(correlation_id_path="requestContext.requestId", trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle(event, context)
