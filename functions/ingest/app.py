"""Ingest function: the ingest queue's messages (S3 uploads under documents/, re-index and re-embed jobs) with
partial batch failures, and the API's synchronous `pa_embed_query` invokes (the API layer has no embedder)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from personal_agent.knowledge.query_embedding import embed_for_invoke
from personal_agent.knowledge.worker import handle_message
from personal_agent.observability import instrument
from personal_agent.runtime import run_sync

processor = BatchProcessor(event_type=EventType.SQS)


def record_handler(record: SQSRecord) -> list[str]:
    """One message; an exception marks only this message failed (SQS retries it, then dead-letters it)."""
    return run_sync(handle_message(record.body))


@instrument(trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if "pa_embed_query" in event:
        return run_sync(embed_for_invoke(event))
    response = process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
    return dict(response)
