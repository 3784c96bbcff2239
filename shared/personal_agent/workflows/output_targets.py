"""One delivery to one output: open what is sealed (in a thread: KMS on AWS) and send it the way its kind
needs. The signing secret and a Slack/Teams URL exist in memory only for the call; never logged.

An e-mail output goes only to an active member of the org (the address their identity provider gave) or to an
address in one of the org's allowed domains (`output_email_domains`, set by an org admin): checked when the output
is saved and again at every send, so a member who left stops getting the org's results."""

from __future__ import annotations

import asyncio
import json
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.outbox.http_post import Sent
from personal_agent.workflows.credentials import Sealed, unseal
from personal_agent.workflows.output_delivery_store import TakenDelivery
from personal_agent.workflows.output_payloads import summary
from personal_agent.workflows.output_senders import post_signed, post_text, send_email
from personal_agent.workflows.output_store import Output


def message_id(delivery_id: UUID) -> str:
    """The delivery's `webhook-id`: the same on every retry and redelivery, so a receiver can drop repeats."""
    return f"msg_{delivery_id.hex}"


EMAIL_NOT_ALLOWED = "e-mail outputs go to the org's members or its allowed domains only"


async def recipient_refusal(conn: Conn, email: str) -> str | None:
    """Why `email` may not receive the org's outputs (None: it may), in the caller's org transaction."""
    domain = email.rsplit("@", 1)[-1].strip().lower()
    cur = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.status = 'active'"
        " AND u.disabled_at IS NULL AND lower(u.email) = lower(%s))"
        " OR EXISTS (SELECT 1 FROM org_settings WHERE %s = ANY(output_email_domains)) AS allowed",
        [email.strip(), domain],
    )
    row = await cur.fetchone()
    return None if row is not None and row["allowed"] else EMAIL_NOT_ALLOWED


async def email_refusal(org_id: UUID, email: str) -> str | None:
    async with org_transaction(org_id) as conn:
        return await recipient_refusal(conn, email)


async def send_to(org_id: UUID, delivery: TakenDelivery, output: Output, sealed: Sealed | None) -> Sent:
    payload = delivery.payload
    if output.kind == "email":
        refused = await email_refusal(org_id, str(output.email))
        if refused is not None:
            return Sent(False, None, refused)
        subject, text = summary(payload)
        return await send_email(str(output.email), subject, text)
    assert sealed is not None, "URL outputs are sealed"
    opened = json.loads(await asyncio.to_thread(unseal, org_id, output.workflow_id, sealed))
    if output.kind == "webhook":
        return await post_signed(opened["url"], opened["secret"], message_id(delivery.id), payload)
    return await post_text(opened["url"], summary(payload)[1])
