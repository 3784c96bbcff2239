"""Deliver function: the outputs queue's messages with partial batch failures, dispatched by their `type` (the
outbox's message kinds, `outbox/queue.py`) to the feature that reacts: a headless run's result or pending approvals
fan out to its workflow's outputs, a logged delivery is tried again, a waiting approval is pushed to its owner's
browsers, a chat whose run ended starts its next queued message, an evaluation whose run ended moves on, a sampled
run is judged. Retries of a failed send are its own delayed messages."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any
from uuid import UUID

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from personal_agent.evals import online as online_sampling
from personal_agent.evals import progress as eval_progress
from personal_agent.lifecycle import followup_starts
from personal_agent.observability import instrument
from personal_agent.outbox import queue
from personal_agent.push import notify
from personal_agent.runtime import run_sync
from personal_agent.workflows import output_dispatch

log = logging.getLogger("personal_agent.deliver")
processor = BatchProcessor(event_type=EventType.SQS)
HANDLERS: dict[str, Callable[[UUID, dict[str, Any]], Coroutine[Any, Any, Any]]] = {
    queue.RUN_FINISHED: output_dispatch.fan_out,
    queue.APPROVAL_REQUESTED: output_dispatch.fan_out,
    queue.DELIVER: output_dispatch.retry,
    queue.PUSH_APPROVALS: notify.deliver,
    queue.PUSH_ESCALATION: notify.deliver_escalation,
    queue.START_FOLLOWUPS: followup_starts.start_next,
    queue.EVAL_RUN_ENDED: eval_progress.run_ended,
    queue.SAMPLE_RUN: online_sampling.sample,
}


def record_handler(record: SQSRecord) -> None:
    """One message; an exception marks only this message failed (SQS retries it, then dead-letters it)."""
    message: dict[str, Any] = json.loads(record.body)
    handle = HANDLERS.get(message.get("type", ""))
    if handle is None:
        log.warning("an outputs message of an unknown type was dropped: %r", message.get("type"))
        return
    run_sync(handle(UUID(message["org_id"]), message))


@instrument(trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    response = process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
    return dict(response)
