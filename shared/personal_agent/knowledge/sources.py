"""Sources (issue 36, item 4): a named collection fed from an S3 prefix or from web pages (one page, or a
sitemap's), kept in sync by events, a schedule and "sync now". Members of the collection see its sources; its
owners and writers add, delete and sync them. The sync runs in the ingest function (`source_sync.py`)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.errors import Forbidden, InvalidInput, NotFound, ServiceUnavailable
from personal_agent.governance.tiers import CLASSIFICATION_TIERS
from personal_agent.knowledge import collections, objects, sources_store
from personal_agent.knowledge import collections_store as cstore
from personal_agent.knowledge.source_events import sync_job_body
from personal_agent.knowledge.sources_store import Source
from personal_agent.knowledge.transaction import knowledge_transaction
from personal_agent.settings import get_settings

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_HOST = re.compile(r"^[a-z0-9.-]{1,253}(:[0-9]{1,5})?$")
MAX_HOSTS = 20


@dataclass(frozen=True)
class SourceIn:
    kind: str
    collection: str
    bucket: str | None = None
    prefix: str = ""
    url: str | None = None
    every: str | None = None
    allow_hosts: tuple[str, ...] = ()
    classification: str = "standard"


def not_found() -> NotFound:
    return NotFound("source not found", code="source_not_found")


def send_sync(org_id: UUID, source_id: UUID) -> None:
    """Queue a sync of the source (blocking)."""
    url = get_settings().ingest_queue_url
    if not url:
        raise ServiceUnavailable("the ingest queue is not configured (PA_INGEST_QUEUE_URL)", code="no_ingest_queue")
    aws_client("sqs").send_message(QueueUrl=url, MessageBody=sync_job_body(org_id, source_id))


def _where(body: SourceIn) -> tuple[str | None, str, str | None, list[str]]:
    """(bucket, prefix, url, allowed hosts) checked for the kind; 422 `invalid_source` otherwise."""
    import httpx

    from personal_agent.knowledge.connectors.web import host_of

    if body.kind == "s3":
        if not body.bucket or not _BUCKET.match(body.bucket) or body.url:
            raise InvalidInput("an s3 source names a bucket (and a prefix), not a url", code="invalid_source")
        if len(body.prefix) > 1024:
            raise InvalidInput("the prefix has at most 1024 characters", code="invalid_source")
        _check_bucket(body.bucket)
        return body.bucket, body.prefix, None, []
    if body.bucket or not body.url or len(body.url) > 2000 or not re.match(r"^https?://[^/\s]+", body.url):
        raise InvalidInput(f"a {body.kind} source names an http(s) url, not a bucket", code="invalid_source")
    try:
        own_host = host_of(body.url).lower()
    except httpx.InvalidURL:
        raise InvalidInput("the url is not valid", code="invalid_source") from None
    hosts = [h.strip().lower() for h in body.allow_hosts if h.strip()] or [own_host]
    if len(hosts) > MAX_HOSTS or not all(_HOST.match(h) for h in hosts):
        raise InvalidInput(f"allow_hosts: at most {MAX_HOSTS} host or host:port names", code="invalid_source")
    return None, "", body.url, hosts


def bucket_allowed(bucket: str, listed: str, *, local: bool) -> bool:
    """A bucket the operator listed (PA_KNOWLEDGE_SOURCE_BUCKETS; the template's KnowledgeSourceBuckets, which the
    ingest function may read), or, locally with none listed, any bucket of the dev stack's moto."""
    names = {b.strip() for b in listed.split(",") if b.strip()}
    return bucket in names or (local and not names)


def _check_bucket(bucket: str) -> None:
    """403 `bucket_not_allowed`: nobody syncs a bucket the operator did not list (another tenant's)."""
    settings = get_settings()
    if not bucket_allowed(bucket, settings.knowledge_source_buckets, local=settings.is_local):
        raise Forbidden(f"the bucket {bucket!r} is not one knowledge sources may read", code="bucket_not_allowed")


async def _collection_id(conn: Any, user_id: UUID, collection: str, *, write: bool) -> UUID:
    """The named collection (its id or name) if the caller may use it: 404, or 403 for a reader who would write."""
    row = await cstore.get(conn, UUID(collection)) if collections.is_collection_id(collection) else None
    row = row or (await cstore.by_name(conn, collection) if not collections.is_collection_id(collection) else None)
    if row is None:
        raise collections.not_found()
    await collections.check_member(conn, row.id, user_id, write=write)
    return row.id


async def create(org_id: UUID, user_id: UUID, body: SourceIn, next_sync_at: datetime | None) -> Source:
    """A source of a collection the caller writes to (`workflows/source_schedules.py` adds its schedule and
    queues its first sync)."""
    if body.kind not in ("s3", "sitemap", "url"):
        raise InvalidInput("kind is s3, sitemap or url", code="invalid_source")
    if body.classification not in CLASSIFICATION_TIERS:
        raise InvalidInput("classification is standard, confidential or restricted", code="invalid_classification")
    bucket, prefix, url, hosts = _where(body)
    every = body.every.strip() if body.every else None
    async with knowledge_transaction(org_id, user_id) as conn:
        collection_id = await _collection_id(conn, user_id, body.collection, write=True)
        source = await sources_store.insert(
            conn,
            {
                "org_id": org_id,
                "collection_id": collection_id,
                "kind": body.kind,
                "bucket": bucket,
                "prefix": prefix,
                "url": url,
                "allow_hosts": hosts,
                "every": every,
                "classification": body.classification,
                "created_by": user_id,
                "next_sync_at": next_sync_at,
            },
        )
    return source


async def _visible(conn: Any, user_id: UUID, source_id: UUID, *, write: bool) -> Source:
    source = await sources_store.get(conn, source_id)
    if source is None or await cstore.role_of(conn, source.collection_id, user_id) is None:
        raise not_found()
    await collections.check_member(conn, source.collection_id, user_id, write=write)
    return source


async def get(org_id: UUID, user_id: UUID, source_id: UUID) -> Source:
    async with knowledge_transaction(org_id, user_id) as conn:
        return await _visible(conn, user_id, source_id, write=False)


async def list_sources(org_id: UUID, user_id: UUID, collection: str | None) -> list[Source]:
    async with knowledge_transaction(org_id, user_id) as conn:
        if collection:
            ids = [await _collection_id(conn, user_id, collection, write=False)]
        else:
            ids = await cstore.readable_ids(conn, user_id)
        return await sources_store.list_in(conn, ids)


async def delete(org_id: UUID, user_id: UUID, source_id: UUID) -> None:
    """Delete the source, the documents it brought in (chunks with them) and their files."""
    async with knowledge_transaction(org_id, user_id) as conn:
        await _visible(conn, user_id, source_id, write=True)
        keys = await sources_store.delete(conn, source_id)
    for key in keys:
        await asyncio.to_thread(objects.delete_object, key)


async def request_sync(org_id: UUID, user_id: UUID, source_id: UUID) -> Source:
    """Queue a sync now (owners and writers of its collection)."""
    async with knowledge_transaction(org_id, user_id) as conn:
        source = await _visible(conn, user_id, source_id, write=True)
    await asyncio.to_thread(send_sync, org_id, source_id)
    return source
