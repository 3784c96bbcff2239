"""One delivery to one output: open what is sealed (in a thread: KMS on AWS) and send it the way its kind
needs. The signing secret and a Slack/Teams URL exist in memory only for the call; never logged."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from uuid import UUID

from personal_agent.workflows.credentials import Sealed, unseal
from personal_agent.workflows.output_payloads import summary
from personal_agent.workflows.output_senders import Sent, post_signed, post_text, send_email


def message_id(delivery_id: UUID) -> str:
    """The delivery's `webhook-id`: the same on every retry and redelivery, so a receiver can drop repeats."""
    return f"msg_{delivery_id.hex}"


async def send_to(org_id: UUID, delivery: dict[str, Any], output: dict[str, Any], sealed: Sealed | None) -> Sent:
    payload: dict[str, Any] = delivery["payload"]
    if output["kind"] == "email":
        subject, text = summary(payload)
        return await send_email(str(output["email"]), subject, text)
    assert sealed is not None, "URL outputs are sealed"
    opened = json.loads(await asyncio.to_thread(unseal, org_id, output["workflow_id"], sealed))
    if output["kind"] == "webhook":
        return await post_signed(opened["url"], opened["secret"], message_id(delivery["id"]), payload)
    return await post_text(opened["url"], summary(payload)[1])
