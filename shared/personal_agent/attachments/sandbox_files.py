"""The files `run_python` reads and writes: a chat's sent files by name going in, and what the code wrote coming
out, stored as attachments of the chat (an image shown inline, anything else a download through
`GET /attachments/{id}/download`), owned by the run's user and marked sent with the run."""

from __future__ import annotations

import asyncio
import mimetypes
import uuid
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from personal_agent.attachments import kinds, objects, store
from personal_agent.db import org_transaction
from personal_agent.knowledge import objects as bucket_objects

MAX_INPUT_BYTES = 25 * 1024 * 1024
"""The largest file put in a sandbox (the largest a chat accepts)."""


@dataclass(frozen=True)
class ChatFile:
    filename: str
    data: bytes


class FileNotInChat(LookupError):
    """A name that is none of the chat's sent files (or one that is too large or gone)."""


async def read_chat_files(org_id: UUID, user_id: UUID, chat_id: UUID, names: list[str]) -> list[ChatFile]:
    """The chat's sent files with these names (the newest of a name), as the run's user may read them."""
    async with org_transaction(org_id) as conn:
        rows = await store.sent_in_chat(conn, chat_id, user_id)
    by_name: dict[str, dict[str, Any]] = {}
    for sent in rows:
        by_name.setdefault(sent["filename"], sent)
    found = []
    for name in names:
        if (row := by_name.get(name)) is None:
            available = ", ".join(sorted(by_name)) or "none"
            raise FileNotInChat(f"{name!r} is not a file of this chat (its files: {available})")
        data = await asyncio.to_thread(objects.read, row["object_key"], MAX_INPUT_BYTES)
        if data is None:
            raise FileNotInChat(f"{name!r} is no longer stored or is larger than 25 MB")
        found.append(ChatFile(row["filename"], data))
    return found


def _content_type(filename: str) -> str:
    guessed, _ = mimetypes.guess_type(filename)
    return guessed or "application/octet-stream"


async def save_output(
    org_id: UUID, user_id: UUID, chat_id: UUID, run_id: UUID, filename: str, data: bytes
) -> dict[str, Any]:
    """Store a file the run's code wrote as a sent attachment of the chat: `{id, filename, content_type, size, kind}`
    (`kind` image: shown inline)."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1][:200] or "file"
    content_type = _content_type(name)
    kind = "image" if content_type in kinds.IMAGE_TYPES and kinds.looks_like(content_type, data) else "document"
    attachment_id = uuid.uuid4()
    key = objects.object_key(org_id, attachment_id, name)
    await asyncio.to_thread(bucket_objects.put_object, key, data, content_type)
    async with org_transaction(org_id) as conn:
        await store.insert(
            conn,
            attachment_id=attachment_id,
            org_id=org_id,
            user_id=user_id,
            chat_id=chat_id,
            kind=kind,
            filename=name,
            content_type=content_type,
            size=len(data),
            object_key=key,
        )
        await store.mark_sent(conn, [attachment_id], run_id)
    return {"id": str(attachment_id), "filename": name, "content_type": content_type, "size": len(data), "kind": kind}


async def read_object_bytes(key: str) -> bytes | None:
    """A stored object's bytes (a knowledge document's file), or None when it is gone or larger than 25 MB."""
    return await asyncio.to_thread(objects.read, key, MAX_INPUT_BYTES)
