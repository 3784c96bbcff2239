"""The outputs queue (SQS): what the deliver function works on. Messages are pointers (ids), never content: the
consumer reads the run's result from Postgres. The engine calls `run_finished` and `approvals_requested` for
headless (webhook, schedule) runs; a queue that refuses a message is logged, never a reason to fail the run."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger("personal_agent.workflows.outputs")
HEADLESS = ("webhook", "schedule")
MAX_DELAY_SECONDS = 900  # SQS's longest per-message delay


def _sqs() -> Any:
    return aws_client("sqs")


def send(message: dict[str, Any], delay_seconds: int = 0) -> None:
    """Queue one message (blocking); raises when the queue is not configured or refuses it."""
    url = get_settings().output_queue_url
    if not url:
        raise RuntimeError("the outputs queue is not configured (PA_OUTPUT_QUEUE_URL)")
    delay = max(0, min(int(delay_seconds), MAX_DELAY_SECONDS))
    _sqs().send_message(QueueUrl=url, MessageBody=json.dumps(message), DelaySeconds=delay)


async def enqueue(message: dict[str, Any], delay_seconds: int = 0) -> None:
    await asyncio.to_thread(send, message, delay_seconds)


async def _announce(spec: RunSpec, message: dict[str, Any]) -> None:
    if spec.trigger_source not in HEADLESS or spec.parent_run_id is not None or not get_settings().output_queue_url:
        return
    try:
        await enqueue(message)
    except Exception:
        log.warning("a workflow output could not be queued", extra={"run_id": str(spec.run_id)}, exc_info=True)


async def run_finished(spec: RunSpec, status: str) -> None:
    """Queue the delivery of a headless run's result to its workflow's outputs."""
    await _announce(spec, {"type": "run_finished", "org_id": str(spec.org_id), "run_id": str(spec.run_id)})


async def approvals_requested(spec: RunSpec, approval_ids: list[str]) -> None:
    """Queue the owner's notification of a headless run's pending approvals."""
    if approval_ids:
        message = {
            "type": "approval_requested",
            "org_id": str(spec.org_id),
            "run_id": str(spec.run_id),
            "approval_ids": approval_ids,
        }
        await _announce(spec, message)


def deliver_message(org_id: UUID, delivery_id: UUID) -> dict[str, Any]:
    return {"type": "deliver", "org_id": str(org_id), "delivery_id": str(delivery_id)}
