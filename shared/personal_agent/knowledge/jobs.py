"""Work for the ingest function that is not an S3 event: re-index a document, re-embed one with the org's new
model. Sent to the ingest queue, so it is retried, dead-lettered and run by the same function as uploads."""

from __future__ import annotations

import json
from typing import Any, Literal
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.errors import ServiceUnavailable
from personal_agent.settings import get_settings

JobKind = Literal["reindex", "reembed"]


def _sqs() -> Any:
    return aws_client("sqs")


def job_body(kind: JobKind, org_id: UUID, document_id: UUID) -> str:
    return json.dumps({"pa_job": kind, "org_id": str(org_id), "document_id": str(document_id)})


def send_jobs(kind: JobKind, org_id: UUID, document_ids: list[UUID]) -> None:
    """Queue one job per document (batches of ten, SQS's limit)."""
    url = get_settings().ingest_queue_url
    if not url:
        raise ServiceUnavailable("the ingest queue is not configured (PA_INGEST_QUEUE_URL)", code="no_ingest_queue")
    for start in range(0, len(document_ids), 10):
        entries = [
            {"Id": str(i), "MessageBody": job_body(kind, org_id, d)}
            for i, d in enumerate(document_ids[start : start + 10])
        ]
        failed = _sqs().send_message_batch(QueueUrl=url, Entries=entries).get("Failed") or []
        if failed:
            raise ServiceUnavailable("the ingest queue refused a job; try again", code="ingest_queue_unavailable")
