"""What an ingest queue message asks for: an S3 `ObjectCreated` record of a document (its key and version), a
queued job (re-index, re-embed), or nothing of ours (S3's test event, an attachment, a stray key)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus
from uuid import UUID

from personal_agent.knowledge.jobs import JobKind
from personal_agent.knowledge.objects import parse_key
from personal_agent.settings import get_settings


@dataclass(frozen=True)
class Uploaded:
    org_id: UUID
    document_id: UUID
    key: str
    version: str
    """The object's S3 version id (versioned bucket), else its ETag: a redelivery carries the same one."""


@dataclass(frozen=True)
class Job:
    kind: JobKind
    org_id: UUID
    document_id: UUID


Work = Uploaded | Job


def _uploaded(record: dict[str, Any]) -> Uploaded | None:
    if not str(record.get("eventName", "")).startswith("ObjectCreated:"):
        return None
    bucket = str(record.get("s3", {}).get("bucket", {}).get("name", ""))
    if bucket and bucket != get_settings().documents_bucket:
        return None  # a watched bucket's object (`source_events.py`), never one of our documents
    obj = record.get("s3", {}).get("object", {})
    key = unquote_plus(str(obj.get("key", "")))  # S3 URL-encodes keys in notifications
    ids = parse_key(key)
    if ids is None:
        return None
    version = str(obj.get("versionId") or obj.get("eTag") or obj.get("sequencer") or "")
    return Uploaded(ids[0], ids[1], key, version)


def parse_message(body: str) -> list[Work]:
    """The work in one message body (S3 batches records; a job is one)."""
    data = json.loads(body)
    if not isinstance(data, dict):
        return []
    if data.get("pa_job") in ("reindex", "reembed"):
        return [Job(data["pa_job"], UUID(data["org_id"]), UUID(data["document_id"]))]
    work: list[Work] = []
    for record in data.get("Records", []):
        uploaded = _uploaded(record) if isinstance(record, dict) else None
        if uploaded is not None:
            work.append(uploaded)
    return work
