"""The ingest queue's messages for sources: a sync job (`sync now`, a schedule's fire) and the `ObjectCreated` /
`ObjectRemoved` records of a watched bucket (any bucket but the documents bucket, whose records are uploads).
The ingest function parses them here and does them in `source_work.py` (`worker.py`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus
from uuid import UUID

from personal_agent.settings import get_settings

SYNC_JOB = "sync_source"


@dataclass(frozen=True)
class SyncJob:
    org_id: UUID
    source_id: UUID
    run: UUID | None = None
    """The sync this job continues (its next chunk); None: start one (unless one is moving)."""
    step: int = 0
    """The chunks that sync had done when this job was queued: a duplicate delivery of a done chunk's job is dropped."""


@dataclass(frozen=True)
class ObjectEvent:
    bucket: str
    key: str
    created: bool
    etag: str | None


def sync_job_body(org_id: UUID, source_id: UUID, run: UUID | None = None, step: int = 0) -> str:
    body = {"pa_job": SYNC_JOB, "org_id": str(org_id), "source_id": str(source_id)}
    return json.dumps(body | ({"run": str(run), "step": step} if run else {}))


def _object_event(record: dict[str, Any]) -> ObjectEvent | None:
    name = str(record.get("eventName", ""))
    if not name.startswith(("ObjectCreated:", "ObjectRemoved:")):
        return None
    s3 = record.get("s3", {})
    bucket = str(s3.get("bucket", {}).get("name", ""))
    if not bucket or bucket == get_settings().documents_bucket:
        return None  # the documents bucket's records are uploads (`messages.py`)
    obj = s3.get("object", {})
    etag = str(obj.get("eTag") or "") or None
    return ObjectEvent(bucket, unquote_plus(str(obj.get("key", ""))), name.startswith("ObjectCreated:"), etag)


def parse_source_work(body: str) -> list[SyncJob | ObjectEvent]:
    """The sources' work in one message body (none for uploads and document jobs)."""
    try:
        data = json.loads(body)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    if data.get("pa_job") == SYNC_JOB:
        run = UUID(data["run"]) if data.get("run") else None
        return [SyncJob(UUID(data["org_id"]), UUID(data["source_id"]), run, int(data.get("step") or 0))]
    found = (_object_event(r) for r in data.get("Records", []) if isinstance(r, dict))
    return [event for event in found if event is not None and event.key]
