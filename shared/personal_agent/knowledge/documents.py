"""The documents service: register a document and hand out its presigned upload, list, read, delete (object and
chunks), re-index. The memory/attachments code registers chat files here too (collection `chat:<chat_id>`)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.errors import InvalidInput, NotFound
from personal_agent.governance.tiers import CLASSIFICATION_TIERS
from personal_agent.knowledge import collections, jobs, objects, ownership, scopes, store
from personal_agent.knowledge.formats import MAX_UPLOAD_BYTES, format_of
from personal_agent.knowledge.model_choice import current_model
from personal_agent.knowledge.status_feed import announce_status
from personal_agent.knowledge.transaction import knowledge_transaction

LIST_LIMIT = 500


def _validate(filename: str, content_type: str, size: int, classification: str) -> None:
    if not filename.strip() or len(filename) > 255 or "\x00" in filename:
        raise InvalidInput("filename has 1 to 255 characters", code="invalid_filename")
    if format_of(content_type) is None:
        raise InvalidInput(
            "only PDF, DOCX, XLSX, PPTX, CSV, HTML, Markdown, plain text, e-mail (.eml), PNG and JPEG documents "
            "are accepted",
            code="unsupported_type",
            status=415,
        )
    if size < 1 or size > MAX_UPLOAD_BYTES:
        raise InvalidInput(f"a document has 1 byte to {MAX_UPLOAD_BYTES} bytes (25 MB)", code="too_large", status=413)
    if classification not in CLASSIFICATION_TIERS:
        raise InvalidInput("classification is standard, confidential or restricted", code="invalid_classification")


async def create_document(
    org_id: UUID,
    user_id: UUID,
    *,
    collection: str,
    filename: str,
    content_type: str,
    size: int,
    classification: str = "standard",
    admin: bool = False,
    trusted: bool = False,
) -> dict[str, Any]:
    """A document record (`uploading`) and the presigned POST its file goes to: `{"document", "upload"}`.
    `admin`: the caller is an org admin (who alone may classify an org document above the default or mark it
    trusted)."""
    collection = scopes.validate(collection)
    _validate(filename, content_type, size, classification)
    ownership.check_trusted(trusted, admin)
    document_id = uuid.uuid4()
    key = objects.object_key(org_id, document_id, filename)
    content_type = content_type.split(";", 1)[0].strip().lower()
    upload = objects.presigned_upload(key, content_type, size)
    async with knowledge_transaction(org_id, user_id, admin=admin) as conn:
        if scopes.is_named(collection):  # 404 for a collection the caller is not in, 403 for its readers
            await collections.check_member(conn, UUID(collection), user_id, write=True)
        await ownership.check_classification(conn, org_id, collection, classification, admin)
        await current_model(conn, classification)  # refused now (403) if the org's embedder may not see it
        row = await store.insert_document(
            conn,
            {
                "id": document_id,
                "org_id": org_id,
                "created_by": user_id,
                "owner_user_id": scopes.owner_of(collection, user_id),
                "collection": collection,
                "filename": filename,
                "content_type": content_type,
                "size": size,
                "classification": classification,
                "object_key": key,
                "trusted": trusted,
            },
        )
    return {"document": row, "upload": upload}


async def list_documents(org_id: UUID, user_id: UUID, collection: str | None) -> list[dict[str, Any]]:
    """One collection's documents, or the org's, the caller's own and those of the named collections they are in."""
    async with knowledge_transaction(org_id, user_id) as conn:
        if collection:
            chosen: tuple[str, ...] = (scopes.validate(collection),)
            if scopes.is_named(collection):
                await collections.check_member(conn, UUID(collection), user_id, write=False)
        else:
            chosen = (scopes.ORG, scopes.PERSONAL, *await collections.readable(conn, user_id, None))
        return await store.list_documents(conn, chosen, LIST_LIMIT)


async def get_document(org_id: UUID, user_id: UUID, document_id: UUID) -> dict[str, Any]:
    """The document if the caller may see it; else 404 (another org's or a colleague's own look the same)."""
    async with knowledge_transaction(org_id, user_id) as conn:
        row = await store.get_document(conn, document_id)
    if row is None:
        raise NotFound("document not found", code="document_not_found")
    return row


async def delete_document(org_id: UUID, user_id: UUID, document_id: UUID, *, admin: bool = False) -> None:
    """Remove the row and every chunk in one transaction, then the object (a redelivered upload event then finds
    no document and is dropped). Only its author or an org admin may (403 `not_document_author`)."""
    async with knowledge_transaction(org_id, user_id, admin=admin) as conn:
        row = await _managed(conn, document_id, user_id, admin)
        deleted = await store.delete_document(conn, document_id)
    if deleted is None:  # the policies of migration 0024 hold what the check above did not
        raise NotFound("document not found", code="document_not_found")
    await asyncio.to_thread(objects.delete_object, row["object_key"])


async def reindex_document(org_id: UUID, user_id: UUID, document_id: UUID, *, admin: bool = False) -> dict[str, Any]:
    """Parse, chunk and embed the stored file again (in the background, through the ingest queue); only its
    author or an org admin may."""
    async with knowledge_transaction(org_id, user_id, admin=admin) as conn:
        row = await _managed(conn, document_id, user_id, admin)
        if row["status"] == "uploading":
            raise InvalidInput("the document has not been uploaded yet", code="not_uploaded", status=409)
        updated = await store.set_status(conn, document_id, "processing")
    if updated is None:
        raise NotFound("document not found", code="document_not_found")
    # After the commit and the announcement: a job run before them could finish first and then be overwritten
    # (in the table or on the feed) by this `processing`.
    await announce_status(updated)
    await asyncio.to_thread(jobs.send_jobs, "reindex", org_id, [document_id])
    return updated


async def set_trusted(org_id: UUID, user_id: UUID, document_id: UUID, trusted: bool) -> dict[str, Any]:
    """An org admin vouches for a document's text (its passages stop counting as untrusted content), or stops."""
    async with knowledge_transaction(org_id, user_id, admin=True) as conn:
        await _managed(conn, document_id, user_id, admin=True)
        updated = await store.set_trusted(conn, document_id, trusted)
    if updated is None:
        raise NotFound("document not found", code="document_not_found")
    return updated


async def _managed(conn: Conn, document_id: UUID, user_id: UUID, admin: bool) -> dict[str, Any]:
    """The document, locked, if the caller may change it: 404 when they cannot see it, 403 when they may only
    read it."""
    row = await store.get_document(conn, document_id)  # not FOR UPDATE: that needs the UPDATE policy, so a
    if row is None:  # colleague's document would look missing instead of not theirs
        raise NotFound("document not found", code="document_not_found")
    ownership.check_may_manage(row, user_id, admin)
    locked = await store.get_document(conn, document_id, lock=True)
    if locked is None:  # deleted meanwhile, or the policies of migration 0024 disagree with the check
        raise NotFound("document not found", code="document_not_found")
    return locked
