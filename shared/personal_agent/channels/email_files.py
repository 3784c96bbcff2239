"""E-mail attachments as chat attachments: at receipt each file is checked against the web chat's limits (its type
and size, `attachments/kinds.py`; at most `MAX_PER_MESSAGE` per message) and staged in the documents bucket under
`attachments/` (outside the ingest prefix), so the message handed on after the ack (an async invoke on AWS) names
the files, not their bytes. Once the sender is a known member with a chat, each becomes that chat's attachment
through the web chat's own `attachments.service.create` (an image, or a document the knowledge base ingests), its
bytes moved to the key it gets; a file refused at either step is named in the thread, never silently dropped."""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import uuid
from collections.abc import Iterable
from email.message import EmailMessage
from uuid import UUID

from personal_agent.attachments import kinds, objects, service, store
from personal_agent.channels.inbound import RefusedFile, StagedFile
from personal_agent.db import org_transaction
from personal_agent.errors import AppError
from personal_agent.identity.principal import Principal
from personal_agent.knowledge import objects as bucket_objects

log = logging.getLogger("personal_agent.channels")


def _media_type(part: EmailMessage, filename: str) -> str:
    declared = part.get_content_type().lower()
    if declared in ("application/octet-stream", "binary/octet-stream"):  # many mailers say no more: ask the name
        return mimetypes.guess_type(filename)[0] or declared
    return declared


def _put(key: str, data: bytes, content_type: str) -> None:
    bucket_objects.put_object(key, data, content_type)


async def stage(org_id: UUID, message: EmailMessage) -> tuple[tuple[StagedFile, ...], tuple[RefusedFile, ...]]:
    """The message's attachments within the limits, staged; and those refused, with why."""
    staged: list[StagedFile] = []
    refused: list[RefusedFile] = []
    for number, part in enumerate(message.iter_attachments(), start=1):
        assert isinstance(part, EmailMessage)
        filename = (part.get_filename() or "").strip() or f"attachment-{number}"
        data = part.get_payload(decode=True)
        data = data if isinstance(data, bytes) else b""
        content_type = _media_type(part, filename)
        try:
            kinds.kind_of(content_type, len(data))
        except AppError as exc:
            refused.append(RefusedFile(filename=filename, reason=exc.message))
            continue
        if len(staged) >= kinds.MAX_PER_MESSAGE:
            refused.append(RefusedFile(filename=filename, reason=f"a message carries at most {kinds.MAX_PER_MESSAGE}"))
            continue
        key = objects.object_key(org_id, uuid.uuid4(), filename)
        await asyncio.to_thread(_put, key, data, content_type)
        staged.append(StagedFile(filename=filename, content_type=content_type, size=len(data), key=key))
    return tuple(staged), tuple(refused)


async def discard(files: Iterable[StagedFile]) -> None:
    """Remove staged files no chat takes (the sender is not a member, or nothing ran)."""
    for file in files:
        await asyncio.to_thread(objects.delete, file.key)


def _move(source: str, target: str, content_type: str) -> None:
    data = objects.read(source, max_bytes=kinds.MAX_IMAGE_BYTES * 4)
    if data is None:
        raise AppError("the file was no longer stored", code="attachment_gone", status=410)
    bucket_objects.put_object(target, data, content_type)
    objects.delete(source)


async def _attach_one(principal: Principal, chat_id: UUID, file: StagedFile) -> UUID:
    created = await service.create(principal, chat_id, file.filename, file.content_type, file.size)
    async with org_transaction(principal.org_id) as conn:
        row = await store.get_owned(conn, UUID(created["id"]), principal.user_id)
    assert row is not None
    await asyncio.to_thread(_move, file.key, row["object_key"], file.content_type)
    return row["id"]  # type: ignore[no-any-return]


async def attach(
    principal: Principal, chat_id: UUID, files: Iterable[StagedFile]
) -> tuple[tuple[UUID, ...], list[RefusedFile]]:
    """The staged files as attachments of the member's chat (ready to name in the message's launch), and any the
    chat refused (a document its classification's embedder may not see, ...)."""
    ids: list[UUID] = []
    refused: list[RefusedFile] = []
    for file in files:
        try:
            ids.append(await _attach_one(principal, chat_id, file))
        except AppError as exc:
            refused.append(RefusedFile(filename=file.filename, reason=exc.message))
            await discard((file,))
    return tuple(ids), refused


def refusal_text(refused: Iterable[RefusedFile]) -> str:
    lines = [f"- {file.filename}: {file.reason}" for file in refused]
    return "These attachments were not taken:\n" + "\n".join(lines)
