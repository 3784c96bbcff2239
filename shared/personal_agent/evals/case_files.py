"""The files an evaluation case carries: uploaded like a chat's attachments (a presigned POST of the documents
bucket, the same types and limits), or taken from the run a case is made from (the files its question was sent
with). They are the org's: any org admin reads and changes them; anyone else, another org's admins too, gets 404.
When an evaluation runs the case, each file is copied into the case's chat as an attachment of its run, so the run
reads it as a person's message would (an image inline, a document by name with `run_python`)."""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any
from uuid import UUID

from personal_agent.attachments import delivery, kinds, objects
from personal_agent.attachments import store as attachment_store
from personal_agent.chats.attachment_refs import described
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import AppError, Conflict, InvalidInput, NotFound
from personal_agent.evals import case_file_store as store
from personal_agent.evals import dataset_store
from personal_agent.identity.principal import Principal
from personal_agent.knowledge import objects as bucket_objects
from personal_agent.knowledge.formats import MAX_UPLOAD_BYTES

PREFIX = "eval-files/"
MAX_PER_CASE = kinds.MAX_PER_MESSAGE
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def object_key(org_id: UUID, file_id: UUID, filename: str) -> str:
    """`eval-files/{org}/{file}/{safe name}`: the org first (a listing or a policy scoped to it), outside `documents/`
    (the ingest queue's prefix)."""
    name = _UNSAFE.sub("_", filename).strip("._")[:120] or "file"
    return f"{PREFIX}{org_id}/{file_id}/{name}"


def view(row: store.CaseFileRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "filename": row.filename,
        "content_type": row.content_type,
        "size": row.size,
        "created_at": row.created_at,
    }


async def _case(conn: Conn, dataset_id: UUID, case_id: UUID) -> dataset_store.CaseRow:
    case = await dataset_store.get_case(conn, dataset_id, case_id)
    if case is None:
        raise NotFound("case not found", code="case_not_found")
    return case


async def create(
    principal: Principal, dataset_id: UUID, case_id: UUID, filename: str, content_type: str, size: int
) -> dict[str, Any]:
    """Register a file of the case; the browser then POSTs it to `upload.url` with `upload.fields`."""
    kinds.kind_of(content_type, size)  # the types and sizes a chat accepts (415, 413, 422)
    name = filename.strip()
    if not name:
        raise InvalidInput("the file needs a name", code="invalid_filename")
    file_id = uuid.uuid4()
    key = object_key(principal.org_id, file_id, name)
    async with org_transaction(principal.org_id) as conn:
        await _case(conn, dataset_id, case_id)
        if len((await store.of_cases(conn, [case_id])).get(case_id, [])) >= MAX_PER_CASE:
            raise InvalidInput(f"a case carries at most {MAX_PER_CASE} files", code="too_many_case_files")
        row = await store.insert(conn, principal.org_id, file_id, case_id, name, content_type, size, key)
    upload = objects.presigned_post(key, content_type, size)
    return {**view(row), "upload": upload}


async def _file(principal: Principal, dataset_id: UUID, case_id: UUID, file_id: UUID) -> store.CaseFileRow:
    async with org_transaction(principal.org_id) as conn:
        row = await store.get(conn, dataset_id, case_id, file_id)
    if row is None:
        raise NotFound("file not found", code="case_file_not_found")
    return row


async def download(principal: Principal, dataset_id: UUID, case_id: UUID, file_id: UUID) -> dict[str, Any]:
    """A short-lived GET of the file (an image inline, anything else as a download); 409 `case_file_not_uploaded`
    until its upload is whole."""
    row = await _file(principal, dataset_id, case_id, file_id)
    if await asyncio.to_thread(objects.uploaded_size, row.object_key) != row.size:
        raise Conflict(f"{row.filename} has not finished uploading", code="case_file_not_uploaded")
    how = delivery.delivery(row.content_type, row.filename)
    signed = await asyncio.to_thread(objects.presigned_get, row.object_key, how.content_type, how.header)
    return {**signed, "content_type": how.content_type, "disposition": how.disposition, "filename": row.filename}


async def delete(principal: Principal, dataset_id: UUID, case_id: UUID, file_id: UUID) -> None:
    row = await _file(principal, dataset_id, case_id, file_id)
    async with org_transaction(principal.org_id) as conn:
        await store.delete(conn, row.id)
    await delete_objects([row.object_key])


async def delete_objects(keys: list[str]) -> None:
    """Delete the objects of rows already deleted (a missing object is no error)."""
    for key in keys:
        await asyncio.to_thread(objects.delete, key)


async def copy_from_run(conn: Conn, org_id: UUID, case_id: UUID, run_user: UUID | None, turn: Any) -> int:
    """Copy the files the run's question (`turn`, its user-prompt content) was sent with into the case, read as the
    run's user (whose chat they are in); a file whose object is gone is left out. How many were copied."""
    ids = [UUID(found["id"]) for found in described(turn)]
    if not ids or run_user is None:
        return 0
    rows = await attachment_store.by_ids(conn, ids, run_user)
    copied = 0
    for row in rows:
        data = await asyncio.to_thread(objects.read, row["object_key"], MAX_UPLOAD_BYTES)
        if data is None:
            continue
        file_id = uuid.uuid4()
        key = object_key(org_id, file_id, row["filename"])
        await asyncio.to_thread(bucket_objects.put_object, key, data, row["content_type"])
        await store.insert(conn, org_id, file_id, case_id, row["filename"], row["content_type"], len(data), key)
        copied += 1
    return copied


async def attach_to_chat(org_id: UUID, user_id: UUID, chat_id: UUID, case_id: UUID) -> tuple[UUID, ...]:
    """Copy the case's files into the chat as `user_id`'s attachments, not sent yet (the launch binds them to the
    run); 409 `case_file_not_uploaded` for a file whose upload is not whole."""
    async with org_transaction(org_id) as conn:
        files = (await store.of_cases(conn, [case_id])).get(case_id, [])
    read = []
    for file in files:
        data = await asyncio.to_thread(objects.read, file.object_key, MAX_UPLOAD_BYTES)
        if data is None or len(data) != file.size:
            raise AppError(f"{file.filename} has not been uploaded", code="case_file_not_uploaded", status=409)
        read.append((file, data))
    copies = []
    for file, data in read:
        attachment_id = uuid.uuid4()
        key = objects.object_key(org_id, attachment_id, file.filename)
        await asyncio.to_thread(bucket_objects.put_object, key, data, file.content_type)
        copies.append((attachment_id, key, file))
    async with org_transaction(org_id) as conn:
        for attachment_id, key, file in copies:
            await attachment_store.insert(
                conn,
                attachment_id=attachment_id,
                org_id=org_id,
                user_id=user_id,
                chat_id=chat_id,
                kind=kinds.kind_of(file.content_type, file.size),
                filename=file.filename,
                content_type=file.content_type,
                size=file.size,
                object_key=key,
            )
    return tuple(a for a, _, _ in copies)
