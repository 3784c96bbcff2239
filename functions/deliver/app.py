"""Deliver function: the outputs queue's messages (a headless run's result or pending approvals to fan out, a
delivery to try again) with partial batch failures. Retries of a failed send are its own delayed messages."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from personal_agent.observability import instrument
from personal_agent.runtime import run_sync
from personal_agent.workflows.output_dispatch import handle_message

processor = BatchProcessor(event_type=EventType.SQS)


def record_handler(record: SQSRecord) -> None:
    """One message; an exception marks only this message failed (SQS retries it, then dead-letters it)."""
    run_sync(handle_message(record.body))


@instrument(trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    response = process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
    return dict(response)
