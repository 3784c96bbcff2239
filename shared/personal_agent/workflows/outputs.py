"""Workflow outputs for the API: add (a callback URL gets a signing secret, returned once), list, switch on or
off, remove; the delivery log and redelivery. Where results go is the owner's choice alone (`ownership`): an org
admin may list the outputs and read the log, but adding, switching, removing and redelivering are 404 to anyone
but the owner. A URL that fails the address checks is refused when it is saved (and again at send)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from typing import TYPE_CHECKING, Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.keyset import decode_uuid_cursor, encode_cursor
from personal_agent.db.pool import Conn
from personal_agent.errors import InvalidInput, NotFound, ServiceUnavailable
from personal_agent.identity.principal import Principal
from personal_agent.net.public_address import AddressRefused
from personal_agent.outbox import queue as output_queue
from personal_agent.settings import get_settings
from personal_agent.workflows import output_delivery_store, output_store, ownership
from personal_agent.workflows.credentials import new_signing_secret, seal
from personal_agent.workflows.output_senders import check_url
from personal_agent.workflows.output_targets import email_refusal

if TYPE_CHECKING:  # httpx loads only when a URL is checked (off the API function's cold start)
    import httpx

EVENTS = ("run.finished", "approval.requested", "question.asked")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


async def _workflow(conn: Conn, principal: Principal, workflow_id: UUID) -> None:
    await ownership.readable_row(conn, principal, workflow_id)


async def _own_workflow(conn: Conn, principal: Principal, workflow_id: UUID) -> None:
    await ownership.owned_row(conn, principal, workflow_id)


def _hint(url: httpx.URL) -> str:
    """What the UI shows of a URL: its origin only (a Slack/Teams URL is its own credential)."""
    return f"{url.scheme}://{url.netloc.decode('ascii')}/…"


async def add_output(principal: Principal, workflow_id: UUID, fields: dict[str, Any]) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        await _own_workflow(conn, principal, workflow_id)  # someone else's workflow is 404 before any other answer
    kind = fields["kind"]
    events = list(dict.fromkeys(fields.get("events") or EVENTS))
    email, sealed, secret, hint = None, None, None, ""
    if kind == "email":
        email = (fields.get("email") or "").strip()
        if not _EMAIL.match(email):
            raise InvalidInput("an e-mail output needs a valid `email`", code="invalid_email", field="email")
        if (refused := await email_refusal(principal.org_id, email)) is not None:
            raise InvalidInput(refused, code="email_not_allowed", field="email")
        hint = email
    else:
        if not fields.get("url"):
            raise InvalidInput(f"a {kind} output needs a `url`", code="field_required", field="url")
        try:
            url = await check_url(fields["url"])
        except AddressRefused as exc:
            raise InvalidInput(str(exc), code="address_not_allowed", field="url") from None
        opened: dict[str, str] = {"url": str(url)}
        if kind == "webhook":
            secret = new_signing_secret()
            opened["secret"] = secret
        sealed = await asyncio.to_thread(seal, principal.org_id, workflow_id, json.dumps(opened))
        hint = _hint(url)
    async with org_transaction(principal.org_id) as conn:
        await _own_workflow(conn, principal, workflow_id)
        row = await output_store.insert(conn, principal.org_id, workflow_id, kind, hint, email, sealed, events)
    return {**dataclasses.asdict(row), "signing_secret": secret}


async def list_outputs(principal: Principal, workflow_id: UUID) -> list[output_store.Output]:
    async with org_transaction(principal.org_id) as conn:
        await _workflow(conn, principal, workflow_id)
        return await output_store.list_for(conn, workflow_id)


async def set_enabled(principal: Principal, workflow_id: UUID, output_id: UUID, enabled: bool) -> output_store.Output:
    async with org_transaction(principal.org_id) as conn:
        await _own_workflow(conn, principal, workflow_id)
        row = await output_store.set_enabled(conn, workflow_id, output_id, enabled)
    if row is None:
        raise NotFound("output not found", code="output_not_found")
    return row


async def remove_output(principal: Principal, workflow_id: UUID, output_id: UUID) -> None:
    async with org_transaction(principal.org_id) as conn:
        await _own_workflow(conn, principal, workflow_id)
        if not await output_store.delete(conn, workflow_id, output_id):
            raise NotFound("output not found", code="output_not_found")


async def delivery_log(principal: Principal, workflow_id: UUID, limit: int, cursor: str | None) -> dict[str, Any]:
    before = decode_uuid_cursor(cursor) if cursor else None
    async with org_transaction(principal.org_id) as conn:
        await _workflow(conn, principal, workflow_id)
        rows = await output_delivery_store.page(conn, workflow_id, before, limit + 1)
    more = len(rows) > limit
    return {
        "items": rows[:limit],
        "next_cursor": encode_cursor(rows[limit - 1].created_at, rows[limit - 1].id) if more else None,
    }


async def redeliver(principal: Principal, workflow_id: UUID, delivery_id: UUID) -> output_delivery_store.OutputDelivery:
    """Send a delivery again (whatever its status), through the queue, with a fresh set of attempts."""
    if not get_settings().output_queue_url:
        raise ServiceUnavailable("the outputs queue is not configured (PA_OUTPUT_QUEUE_URL)", code="no_output_queue")
    async with org_transaction(principal.org_id) as conn:
        await _own_workflow(conn, principal, workflow_id)
        if not await output_delivery_store.restart(conn, workflow_id, delivery_id):
            raise NotFound("delivery not found", code="delivery_not_found")
        row = await output_delivery_store.get(conn, workflow_id, delivery_id)
    await output_queue.enqueue(output_queue.deliver_message(principal.org_id, delivery_id))
    assert row is not None
    return row
