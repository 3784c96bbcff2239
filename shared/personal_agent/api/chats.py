"""Chats: create, list (newest first, paginated), get, rename, delete, and the transcript."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.chats import service
from personal_agent.chats.transcript import transcript_items

router = APIRouter(prefix="/api/v1/chats", tags=["chats"])


Classification = Literal["standard", "confidential", "restricted"]


class ChatCreate(BaseModel):
    title: str | None = Field(None, max_length=200)
    classification: Classification = "standard"


class ChatRename(BaseModel):
    title: str | None = Field(None, min_length=1, max_length=200)
    classification: Classification | None = None


class Chat(BaseModel):
    id: UUID
    title: str
    classification: str
    created_at: Any
    updated_at: Any


class ChatPage(BaseModel):
    items: list[Chat]
    next_cursor: str | None


@router.post("", status_code=201, operation_id="create_chat", response_model=Chat)
async def create_chat(body: ChatCreate, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.create_chat(principal, body.title, body.classification)


@router.get("", operation_id="list_chats", response_model=ChatPage)
async def list_chats(
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: str | None = None,
    q: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    return await service.list_chats(principal, limit, cursor, q)


@router.get("/{chat_id}", operation_id="get_chat", response_model=Chat)
async def get_chat(chat_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.get_chat(principal, chat_id)


@router.patch("/{chat_id}", operation_id="rename_chat", response_model=Chat)
async def rename_chat(chat_id: UUID, body: ChatRename, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.update_chat(principal, chat_id, body.title, body.classification)


@router.delete("/{chat_id}", status_code=204, operation_id="delete_chat")
async def delete_chat(chat_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.delete_chat(principal, chat_id)
    return Response(status_code=204)


@router.get("/{chat_id}/messages", operation_id="chat_transcript")
async def chat_transcript(chat_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return {"items": transcript_items(await service.transcript_rows(principal, chat_id))}
