"""Ingest one uploaded document version: check the stored object against what was declared, parse, chunk, embed,
and replace the document's chunks in one transaction. Idempotent per object version (a redelivered event finds
the version done and adds nothing); a document that cannot be read ends `failed` with a reason and no chunks.
Anything else (database, S3, the embedder down) raises, so SQS retries the message and then dead-letters it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from uuid import UUID

from personal_agent.governance.tiers import ClassificationBlocked
from personal_agent.knowledge import chunk_store, objects, store
from personal_agent.knowledge.chunking import chunk_sections, document_title, embedding_text
from personal_agent.knowledge.embedders import count_tokens
from personal_agent.knowledge.formats import MAX_UPLOAD_BYTES, format_of, matches_content
from personal_agent.knowledge.metered_embedding import embed_document_chunks
from personal_agent.knowledge.model_choice import current_model
from personal_agent.knowledge.parsing import Section, UnreadableDocument
from personal_agent.knowledge.parsing.isolated import parse_isolated
from personal_agent.knowledge.status_feed import announce_status
from personal_agent.knowledge.transaction import worker_transaction
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.knowledge.ingest")
DONE = ("ready", "failed")


async def ingest_upload(org_id: UUID, document_id: UUID, key: str, version: str | None) -> str:
    """Process the object at `key` (`version`: None re-indexes whatever is stored). Returns what happened."""
    async with worker_transaction(org_id) as conn:
        doc = await store.get_document(conn, document_id, lock=True)
        if doc is None or doc["object_key"] != key:
            return "unknown_document"  # deleted since, or not ours: nothing to do
        if version is not None and doc["object_version"] == version and doc["status"] in DONE:
            return "duplicate"
        doc = await store.set_status(conn, document_id, "processing")
    assert doc is not None
    await announce_status(doc)
    stored = await asyncio.to_thread(objects.read_object, key, MAX_UPLOAD_BYTES)
    if stored is None:
        return await _fail(doc, version or "", ("missing", "the uploaded file is gone"))
    version = version or stored.version
    settings = get_settings()
    try:
        sections = await asyncio.to_thread(_sections, doc, stored)
        chunks = chunk_sections(sections, count_tokens, max_chunks=settings.ingest_max_chunks)
        model = await _model(org_id, doc["classification"])
    except _RefusedObject as exc:
        return await _fail(doc, version, (exc.code, exc.message), delete_object=True)
    except UnreadableDocument as exc:  # unreadable, or past a limit: failed, never half-indexed
        return await _fail(doc, version, (exc.code, exc.message))
    except ClassificationBlocked as exc:
        return await _fail(doc, version, (exc.code, exc.message))
    title = document_title(doc["filename"])
    texts = [embedding_text(title, c.section, c.text) for c in chunks]
    vectors = await embed_document_chunks(model, texts, org_id, doc["created_by"], document_id, "ingest")
    rows = [
        chunk_store.NewChunk(i, c.text, c.tokens, c.page, c.section, v)
        for i, (c, v) in enumerate(zip(chunks, vectors, strict=True))
    ]
    pages = max((s.page or 0 for s in sections), default=0) or None
    async with worker_transaction(org_id) as conn:
        current = await store.get_document(conn, document_id, lock=True)
        if current is None or current["object_key"] != key:
            return "unknown_document"
        if current["object_version"] == version and current["status"] == "ready":
            return "duplicate"  # a concurrent delivery of the same version finished first
        await chunk_store.replace_chunks(conn, current, rows, model.id, model.dim, title=title)
        ready = await store.mark_ready(conn, document_id, version, pages, len(rows))
    await announce_status(ready)
    log.info("document ingested", extra={"document_id": str(document_id), "chunks": len(rows)})
    return "ready"


class _RefusedObject(UnreadableDocument):
    """A file S3's POST policy should have refused (larger or of another type than declared): it is not kept."""


def _sections(doc: dict[str, Any], stored: objects.StoredObject) -> list[Section]:
    """The object checked against the declaration (S3's POST policy enforces it; this holds where it does not,
    e.g. moto), then parsed in a child process with bounded memory, time and text (`parsing/isolated.py`)."""
    fmt = format_of(doc["content_type"])
    if stored.size > min(doc["size"], MAX_UPLOAD_BYTES):
        raise _RefusedObject("too_large", f"the file has {stored.size} bytes, more than the {doc['size']} declared")
    if fmt is None or format_of(stored.content_type or doc["content_type"]) != fmt:
        raise _RefusedObject("wrong_type", f"the file was uploaded as {stored.content_type!r}, not {fmt}")
    if not matches_content(fmt, stored.data[:1024]):
        raise _RefusedObject("wrong_type", f"the file's content is not {fmt}")
    settings = get_settings()
    return parse_isolated(
        fmt,
        stored.data,
        max_chars=settings.ingest_max_chars,
        memory_mb=settings.ingest_parse_memory_mb,
        seconds=settings.ingest_parse_seconds,
    )


async def _model(org_id: UUID, classification: str) -> Any:
    async with worker_transaction(org_id) as conn:
        return await current_model(conn, classification)


async def _fail(doc: dict[str, Any], version: str, error: tuple[str, str], *, delete_object: bool = False) -> str:
    """`failed` with the reason, and no chunks (an earlier version's are removed too: they no longer match). A file
    the policy should have refused is deleted first, so whoever sees `failed` no longer finds it."""
    if delete_object:
        await asyncio.to_thread(objects.delete_object, doc["object_key"])
    async with worker_transaction(doc["org_id"]) as conn:
        await chunk_store.delete_chunks(conn, doc["id"])
        failed = await store.set_status(conn, doc["id"], "failed", error, version=version)
    if failed is not None:
        await announce_status(failed)
    return "failed"
