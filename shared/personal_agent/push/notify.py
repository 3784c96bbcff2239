"""Telling a run's owner, on every browser they subscribed, that an approval waits. The engine's outbox queues a
pointer (`push_approvals`: org, run, approval ids) on the outputs queue; the deliver function reads the owner, the
approvals still pending and the owner's subscriptions, and sends one message per approval and browser. The
message names the tool and links to the chat: never the call's arguments. A push is a nudge, not the record
(the approval is in the web chat either way): a failed send is logged, not retried; a gone browser is forgotten."""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from personal_agent.approvals import store as approval_store
from personal_agent.db import org_transaction
from personal_agent.push import store
from personal_agent.runs import store as run_store
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.push")


def payload(approval: approval_store.WaitingApproval) -> dict[str, Any]:
    base = get_settings().public_url.rstrip("/")
    if approval.tool_name == "ask_user":  # a question (the same wait): its text stays out of the push service
        title, body = "A question for you", "A run is waiting for your answer"
    else:
        title, body = "Approval needed", f"{approval.tool_name} is waiting for your approval"
    return {
        "type": "approval_requested",
        "title": title,
        "body": body,
        "url": f"{base}/chats/{approval.chat_id}",
        "tag": f"approval-{approval.id}",
        "approval_id": str(approval.id),
        "run_id": str(approval.run_id),
        "chat_id": str(approval.chat_id),
    }


def _vapid() -> Any:
    """The VAPID signer (None, logged, when this function has no key)."""
    from personal_agent.push.vapid import Vapid, load_private_key
    from personal_agent.secret_env import ensure_secrets_loaded

    ensure_secrets_loaded()
    settings = get_settings()
    if not settings.vapid_private_key:
        log.warning("a push notification was dropped: PA_VAPID_PRIVATE_KEY is not set here")
        return None
    return Vapid(load_private_key(settings.vapid_private_key), settings.vapid_subject)


async def _send_to(org_id: UUID, user_id: UUID, vapid: Any, payloads: list[dict[str, Any]]) -> int:
    """Each payload to each of the user's browsers; a gone browser is forgotten. How many were accepted."""
    from personal_agent.push import sender

    async with org_transaction(org_id) as conn:
        await store.as_user(conn, user_id)
        subscriptions = await store.list_own(conn, user_id)
    accepted = 0
    for body in payloads:
        for subscription in subscriptions:
            sent = await sender.send(vapid, subscription, body)
            if sent.ok:
                accepted += 1
            elif sent.status_code in sender.GONE:
                async with org_transaction(org_id) as conn:
                    await store.as_user(conn, user_id)
                    await store.delete_endpoint(conn, user_id, subscription["endpoint"])
            else:
                log.warning("a push notification was not accepted", extra={"error": sent.error})
    return accepted


async def deliver(org_id: UUID, message: dict[str, Any]) -> int:
    """Send the message's pending approvals to the run owner's browsers; returns how many pushes were accepted."""
    vapid = _vapid()
    if vapid is None:
        return 0
    run_id = UUID(message["run_id"])
    async with org_transaction(org_id) as conn:
        run = await run_store.get_run(conn, run_id)
        if run is None or run.user_id is None:  # a run nobody owns has nobody to tell
            return 0
        approvals = await approval_store.pending_of(conn, run_id, list(message.get("approval_ids", [])))
    return await _send_to(org_id, run.user_id, vapid, [payload(a) for a in approvals])


async def deliver_escalation(org_id: UUID, message: dict[str, Any]) -> int:
    """An escalated approval, still pending, to each named org admin's browsers (`push_escalation`)."""
    vapid = _vapid()
    if vapid is None:
        return 0
    async with org_transaction(org_id) as conn:
        approvals = await approval_store.pending_of(conn, UUID(message["run_id"]), [message["approval_id"]])
    if not approvals:  # decided meanwhile
        return 0
    body = payload(approvals[0]) | {"type": "approval_escalated", "title": "Approval escalated to you"}
    body["body"] = f"{approvals[0].tool_name} waits for an approval nobody gave in time"
    return sum([await _send_to(org_id, UUID(user), vapid, [body]) for user in message.get("user_ids", [])])
