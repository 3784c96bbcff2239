"""What the model reads of a message's attachments, swapped in for the references of the stored turn in each
model request only (a pydantic-ai capability's `before_model_request`): an image becomes `BinaryContent` read
from the documents bucket; a document becomes a note that it is in the chat's knowledge. The run's messages,
and so its checkpoints, keep the references."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any
from uuid import UUID

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import BinaryContent, DocumentUrl, ImageUrl, ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models import ModelRequestContext

from personal_agent.attachments import objects, store
from personal_agent.attachments.kinds import MAX_IMAGE_BYTES, looks_like
from personal_agent.chats.attachment_refs import attachment_id
from personal_agent.db import org_transaction
from personal_agent.spec.run_deps import RunDeps


def _references(messages: list[ModelMessage]) -> set[UUID]:
    ids = set()
    for message in messages:
        for part in message.parts if isinstance(message, ModelRequest) else ():
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                for item in part.content:
                    if isinstance(item, ImageUrl | DocumentUrl) and (found := attachment_id(item.url)):
                        ids.add(found)
    return ids


def _name(item: ImageUrl | DocumentUrl) -> str:
    meta = item.vendor_metadata or {}
    return str(meta.get("name") or "file")


@dataclass
class AttachmentContent(AbstractCapability[RunDeps]):
    """Built with each engine step's agent; keeps the bytes it read for the step's later requests."""

    _loaded: dict[UUID, Any] = field(default_factory=dict)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def _load(self, org_id: UUID, user_id: UUID | None, ids: set[UUID]) -> None:
        wanted = [i for i in ids if i not in self._loaded]
        if not wanted:
            return
        rows: dict[UUID, dict[str, Any]] = {}
        if user_id is not None:  # files belong to a person: a run without one reads none
            async with org_transaction(org_id) as conn:
                rows = {r["id"]: r for r in await store.by_ids(conn, wanted, user_id)}
        for i in wanted:
            row = rows.get(i)
            if row is not None and row["kind"] == "image":
                data = await asyncio.to_thread(objects.read, row["object_key"], MAX_IMAGE_BYTES)
                usable = data is not None and looks_like(row["content_type"], data)
                self._loaded[i] = BinaryContent(data, media_type=row["content_type"]) if usable and data else None
            else:
                self._loaded[i] = row

    def _swap(self, item: Any) -> Any:
        if not isinstance(item, ImageUrl | DocumentUrl) or (found := attachment_id(item.url)) is None:
            return item
        loaded = self._loaded.get(found)
        if isinstance(loaded, BinaryContent):
            return loaded
        if isinstance(loaded, dict) and loaded["kind"] == "document" and loaded["document_id"] is None:
            # a file not indexed (an evaluation case's): the sandbox reads it by name
            return f"[The user attached the file {_name(item)!r}; run_python reads it by that name.]"
        if isinstance(loaded, dict) and loaded["kind"] == "document":
            return (
                f"[The user attached the document {_name(item)!r}: it is in this chat's knowledge base; "
                "search it with the search_knowledge tool.]"
            )
        return f"[The user attached {_name(item)!r}, which is no longer available or is not a readable image.]"

    def _message(self, message: ModelMessage) -> ModelMessage:
        if not isinstance(message, ModelRequest):
            return message
        parts = [
            replace(p, content=[self._swap(c) for c in p.content])
            if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
            else p
            for p in message.parts
        ]
        return replace(message, parts=parts)

    async def before_model_request(
        self, ctx: RunContext[RunDeps], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        ids = _references(request_context.messages)
        if not ids:
            return request_context
        await self._load(ctx.deps.org_id, ctx.deps.user_id, ids)
        request_context.messages = [self._message(m) for m in request_context.messages]
        return request_context
