"""The ingest function's work per queue message: uploads, re-index and re-embed jobs, and sources' syncs."""

from __future__ import annotations

from personal_agent.knowledge import store
from personal_agent.knowledge.ingest import ingest_upload
from personal_agent.knowledge.messages import Job, Uploaded, parse_message
from personal_agent.knowledge.reembed import reembed_document
from personal_agent.knowledge.source_events import parse_source_work
from personal_agent.knowledge.source_work import handle_source_work
from personal_agent.knowledge.transaction import worker_transaction


async def handle_message(body: str) -> list[str]:
    """Do what the message asks; raises (so SQS retries it) only for failures that may pass."""
    outcomes: list[str] = await handle_source_work(parse_source_work(body))  # sources: sync jobs, watched buckets
    for work in parse_message(body):
        if isinstance(work, Uploaded):
            outcomes.append(await ingest_upload(work.org_id, work.document_id, work.key, work.version))
        elif isinstance(work, Job) and work.kind == "reembed":
            outcomes.append(await reembed_document(work.org_id, work.document_id))
        elif isinstance(work, Job):
            outcomes.append(await _reindex(work))
    return outcomes


async def _reindex(job: Job) -> str:
    async with worker_transaction(job.org_id) as conn:
        doc = await store.get_document(conn, job.document_id)
    if doc is None:
        return "unknown_document"
    return await ingest_upload(job.org_id, job.document_id, doc["object_key"], None)
