"""A workflow's outputs, the deliver function's work for them (it dispatches the outputs queue's messages by type).

`run_finished` / `approval_requested` fan out: one delivery-log row per enabled output that wants the event
(unique per output and event, so a repeated message sends nothing twice), each tried at once. `deliver` tries
one logged delivery again. A failed try is queued again with a doubling delay until `output_max_attempts`,
then the delivery is `failed` with its last error; a redelivery from the API starts the attempts again.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from personal_agent.bus import feed
from personal_agent.db import org_transaction
from personal_agent.outbox import queue as output_queue
from personal_agent.settings import get_settings
from personal_agent.workflows import delivery_store, output_delivery_store, output_store
from personal_agent.workflows import store as workflow_store
from personal_agent.workflows.output_payloads import approval_payloads, question_payloads, run_payload
from personal_agent.workflows.output_targets import send_to

log = logging.getLogger("personal_agent.workflows.outputs")
LINK_RETRIES = 5  # a run can end before its trigger recorded it: look again a few times, then give up


async def retry(org_id: UUID, message: dict[str, Any]) -> str | None:
    """A `deliver` message: try its logged delivery again."""
    return await attempt(org_id, UUID(message["delivery_id"]))


async def fan_out(org_id: UUID, message: dict[str, Any]) -> list[UUID]:
    """Log one delivery per interested output and try each; returns the new deliveries' ids."""
    run_id = UUID(message["run_id"])
    async with org_transaction(org_id) as conn:
        workflow_id = await delivery_store.workflow_of_run(conn, run_id)
        if workflow_id is None:
            tries = int(message.get("link_tries", 0))
            if tries < LINK_RETRIES:
                await output_queue.enqueue({**message, "link_tries": tries + 1}, delay_seconds=1 + tries)
            else:
                log.warning(
                    "a finished run has no workflow delivery; its outputs were not sent", extra={"run_id": str(run_id)}
                )
            return []
        outputs = await output_store.list_for(conn, workflow_id, enabled_only=True)
        if message["type"] == "run_finished":
            events = [("run.finished", str(run_id), await run_payload(conn, workflow_id, run_id))]
        else:
            waits = message.get("approval_ids", [])
            events = [
                ("approval.requested", key, payload)
                for key, payload in await approval_payloads(conn, workflow_id, run_id, waits)
            ] + [
                ("question.asked", key, payload)
                for key, payload in await question_payloads(conn, workflow_id, run_id, waits)
            ]
        new: list[UUID] = []
        for output in outputs:
            for event, key, payload in events:
                if wants(output.events, event):
                    delivery_id = await output_delivery_store.add(
                        conn, org_id, workflow_id, output.id, event, key, run_id, payload
                    )
                    if delivery_id is not None:
                        new.append(delivery_id)
    for delivery_id in new:
        await attempt(org_id, delivery_id)
    return new


def wants(events: list[str], event: str) -> bool:
    """Whether an output subscribed to `events` gets `event`: an output for approval requests also gets the run's
    questions (both wait for a person)."""
    return event in events or (event == "question.asked" and "approval.requested" in events)


def retry_delay(attempts: int) -> int:
    """Seconds before try number `attempts + 1`: the base, doubling each time, at most SQS's 900 s."""
    base = get_settings().output_retry_base_seconds
    return int(min(base * 2 ** max(attempts - 1, 0), output_queue.MAX_DELAY_SECONDS))


async def attempt(org_id: UUID, delivery_id: UUID) -> str | None:
    """Try one delivery once; returns its status afterwards (None when it is gone or already delivered)."""
    async with org_transaction(org_id) as conn:
        row = await output_delivery_store.take(conn, delivery_id)
        if row is None or row.status in ("succeeded", "failed"):
            return None
        target = await output_store.sealed_target(conn, row.output_id)
        workflow = await workflow_store.get_row(conn, row.workflow_id)
    if target is None or workflow is None:
        return None
    output, sealed = target
    sent = await send_to(org_id, row, output, sealed)
    attempts = row.attempts + 1
    if sent.ok:
        status, next_at, delay = "succeeded", None, 0
    elif attempts >= get_settings().output_max_attempts:
        status, next_at, delay = "failed", None, 0
    else:
        delay = retry_delay(attempts)
        status, next_at = "retrying", datetime.now(UTC) + timedelta(seconds=delay)
    async with org_transaction(org_id) as conn:
        await output_delivery_store.record_attempt(conn, delivery_id, status, sent.error, sent.status_code, next_at)
    # The workflow's owner hears of every attempt on their feed (the delivery log's page follows it).
    value = {"delivery_id": str(delivery_id), "workflow_id": str(row.workflow_id), "status": status}
    await feed.announce(org_id, workflow.owner_id, "output_delivery", value)
    if status == "retrying":
        await output_queue.enqueue(output_queue.deliver_message(org_id, delivery_id), delay_seconds=delay)
    return status
