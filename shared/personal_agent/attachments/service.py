"""Attachments for the API and the launch: register a file and hand back its presigned upload, check the files a
message names (the caller's own, of this chat, uploaded, not sent before), bind them to the run, delete one.

Who may: a chat's owner attaches in it, and so does an editor or owner of the chat's project (the file is the
uploader's; a viewer gets 403 `project_read_only`); whoever may read the chat (a project's members, viewers too)
reads and downloads its files; only the uploader removes one not sent yet. Anyone else gets 404."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any
from uuid import UUID

from personal_agent.attachments import delivery, kinds, objects, store
from personal_agent.chats import store as chat_store
from personal_agent.chats.attachment_refs import with_attachments
from personal_agent.chats.store import ChatRow
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import AppError, Conflict, Forbidden, InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.knowledge import documents, scopes


def view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "chat_id": str(row["chat_id"]),
        "kind": row["kind"],
        "filename": row["filename"],
        "content_type": row["content_type"],
        "size": int(row["size"]),
        "run_id": str(row["run_id"]) if row["run_id"] else None,
        "document_id": str(row["document_id"]) if row["document_id"] else None,
        "created_at": row["created_at"].isoformat(),
    }


def _missing() -> NotFound:
    return NotFound("attachment not found", code="attachment_not_found")


async def _writable_chat(conn: Conn, principal: Principal, chat_id: UUID) -> ChatRow:
    """The chat if the caller may attach in it (its owner, or an editor or owner of its project); 403 for a viewer
    of its project, 404 for anyone else."""
    chat = await chat_store.get_visible(conn, chat_id, principal.user_id, write=True)
    if chat is not None:
        return chat
    if await chat_store.get_visible(conn, chat_id, principal.user_id) is not None:
        raise Forbidden("viewers of a project only read its chats", code="project_read_only")
    raise NotFound("chat not found", code="chat_not_found")


async def create(principal: Principal, chat_id: UUID, filename: str, content_type: str, size: int) -> dict[str, Any]:
    """Register a file for a chat the caller may write in; the browser then POSTs it to `upload.url` with
    `upload.fields`."""
    kind = kinds.kind_of(content_type, size)
    name = filename.strip()
    if not name:
        raise InvalidInput("the file needs a name", code="invalid_filename")
    if kind == "document":
        return await _create_document(principal, chat_id, name, content_type, size)
    attachment_id = uuid.uuid4()
    key = objects.object_key(principal.org_id, attachment_id, name)
    async with org_transaction(principal.org_id) as conn:
        await _writable_chat(conn, principal, chat_id)
        upload = objects.presigned_post(key, content_type, size)
        row = await store.insert(
            conn,
            attachment_id=attachment_id,
            org_id=principal.org_id,
            user_id=principal.user_id,
            chat_id=chat_id,
            kind=kind,
            filename=name,
            content_type=content_type,
            size=size,
            object_key=key,
        )
    return {**view(row), "upload": upload}


async def _create_document(
    principal: Principal, chat_id: UUID, name: str, content_type: str, size: int
) -> dict[str, Any]:
    """A document becomes a knowledge document of the chat (collection `chat:<chat_id>`, the chat's
    classification): the ingest pipeline parses and indexes it once uploaded, and the chat's runs search it."""
    async with org_transaction(principal.org_id) as conn:
        chat = await _writable_chat(conn, principal, chat_id)
    created = await documents.create_document(
        principal.org_id,
        principal.user_id,
        collection=scopes.chat_collection(chat_id),
        filename=name,
        content_type=content_type,
        size=size,
        classification=chat.classification,
    )
    document = created["document"]
    async with org_transaction(principal.org_id) as conn:
        row = await store.insert(
            conn,
            attachment_id=uuid.uuid4(),
            org_id=principal.org_id,
            user_id=principal.user_id,
            chat_id=chat_id,
            kind="document",
            filename=name,
            content_type=document["content_type"],
            size=size,
            object_key=document["object_key"],
            document_id=document["id"],
        )
    return {**view(row), "upload": {"url": created["upload"]["url"], "fields": created["upload"]["fields"]}}


async def get(principal: Principal, attachment_id: UUID) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        row = await store.get_visible(conn, attachment_id, principal.user_id)
    if row is None:
        raise _missing()
    return view(row)


async def download(principal: Principal, attachment_id: UUID) -> dict[str, Any]:
    """A short-lived URL the browser of someone who may read the file's chat fetches it from (images inline with
    their type, anything else as a download); a file of a chat the caller may not read is 404 like a missing one."""
    async with org_transaction(principal.org_id) as conn:
        row = await store.get_visible(conn, attachment_id, principal.user_id)
    if row is None:
        raise _missing()
    return await signed_download(row)


async def signed_download(row: dict[str, Any]) -> dict[str, Any]:
    """The presigned GET of an attachment's object (`download`'s answer); 409 `attachment_not_uploaded` for one not
    uploaded yet, 410 `attachment_gone` for one whose object is gone (its knowledge document deleted)."""
    size = await asyncio.to_thread(objects.uploaded_size, row["object_key"])
    if size is None and row["run_id"] is not None:
        raise AppError("the file is no longer stored", code="attachment_gone", status=410)
    if size != row["size"]:
        raise Conflict(f"{row['filename']} has not finished uploading", code="attachment_not_uploaded")
    how = delivery.delivery(row["content_type"], row["filename"])
    signed = await asyncio.to_thread(objects.presigned_get, row["object_key"], how.content_type, how.header)
    return {
        "url": signed["url"],
        "expires_in": signed["expires_in"],
        "content_type": how.content_type,
        "disposition": how.disposition,
        "filename": row["filename"],
    }


async def delete(principal: Principal, attachment_id: UUID) -> None:
    """Remove a file not sent yet (the chip's ×); a sent one stays with its message (409 `attachment_sent`)."""
    async with org_transaction(principal.org_id) as conn:
        row = await store.get_owned(conn, attachment_id, principal.user_id)
        if row is None:
            raise _missing()
        if row["run_id"] is not None:
            raise Conflict("the file was sent with a message; delete the chat to remove it", code="attachment_sent")
        await store.delete_owned(conn, attachment_id, principal.user_id)
    if row["document_id"] is not None:
        await documents.delete_document(principal.org_id, principal.user_id, row["document_id"])
    else:
        await asyncio.to_thread(objects.delete, row["object_key"])


async def for_message(conn: Conn, user_id: UUID | None, chat_id: UUID, ids: tuple[UUID, ...]) -> list[dict[str, Any]]:
    """The attachments a new message names, checked: the caller's, of this chat, not sent before, uploaded whole
    (in the launch's org transaction)."""
    if not ids:
        return []
    wanted = list(dict.fromkeys(ids))
    if len(wanted) > kinds.MAX_PER_MESSAGE:
        raise InvalidInput(f"a message carries at most {kinds.MAX_PER_MESSAGE} files", code="too_many_attachments")
    if user_id is None:
        raise InvalidInput("only a person's message carries files", code="attachments_need_user")
    rows = await store.owned_in_chat(conn, wanted, user_id, chat_id)
    found = {r["id"]: r for r in rows}
    missing = [str(i) for i in wanted if i not in found]
    if missing:
        raise NotFound("attachment not found in this chat", code="attachment_not_found", ids=missing)
    ordered = [found[i] for i in wanted]
    if any(r["run_id"] is not None for r in ordered):
        raise Conflict("a file was already sent with another message", code="attachment_sent")
    for row in ordered:
        size = await asyncio.to_thread(objects.uploaded_size, row["object_key"])
        if size != row["size"]:
            raise Conflict(
                f"{row['filename']} has not finished uploading", code="attachment_not_uploaded", id=str(row["id"])
            )
    return ordered


async def bind(conn: Conn, rows: list[dict[str, Any]], run_id: UUID, turn: dict[str, Any]) -> dict[str, Any]:
    """Mark the files sent with `run_id` (in the launch's transaction; 409 when a concurrent message took one) and
    return the user's turn with references to them."""
    if rows and await store.mark_sent(conn, [r["id"] for r in rows], run_id) != len(rows):
        raise Conflict("a file was already sent with another message", code="attachment_sent")
    return with_attachments(turn, rows)
