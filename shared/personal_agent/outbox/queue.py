"""The outputs queue (SQS): what the deliver function works on. Messages are pointers (ids), never content: the
consumer reads the run's result from Postgres. A message names its kind in `type` (the constants below), and the
deliver function dispatches on it."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.settings import get_settings

MAX_DELAY_SECONDS = 900  # SQS's longest per-message delay
RUN_FINISHED = "run_finished"  # a headless run ended: its workflow's outputs fan out
APPROVAL_REQUESTED = "approval_requested"  # a headless run waits: its workflow's outputs fan out
PUSH_APPROVALS = "push_approvals"  # a run waits: its owner's browsers hear of it
PUSH_ESCALATION = "push_escalation"  # an approval escalated: the org admins' browsers hear of it
DELIVER = "deliver"  # one logged output delivery, tried again
START_FOLLOWUPS = "start_followups"  # a chat's run ended (or its queue stalled): its next queued message starts
EVAL_RUN_ENDED = "eval_run_ended"  # an evaluation's case (or judge) run ended: the evaluation moves on
SAMPLE_RUN = "sample_run"  # a production run in its agent's online sample ended: its LLM judge runs


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


def deliver_message(org_id: UUID, delivery_id: UUID) -> dict[str, Any]:
    return {"type": DELIVER, "org_id": str(org_id), "delivery_id": str(delivery_id)}
