"""`/api/v1/me/memories`: what the agent remembers about the caller (in the current org): list, add, edit,
delete. Nobody else's memories are reachable here: another person's memory is a 404."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.memories import service

router = APIRouter(prefix="/api/v1/me/memories", tags=["me"])


class MemoryIn(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"text": "Prefers metric units"}]})

    text: str = Field(
        max_length=10_000, description="one fact or preference, at most 1,000 characters (422 `memory_too_long`)"
    )


class Memory(BaseModel):
    id: UUID
    text: str
    source_run_id: UUID | None = Field(description="the run whose `remember` call saved it; null when typed here")
    project_id: UUID | None = Field(
        None, description="the project whose chats recall it (saved in one of them); null: recalled outside projects"
    )
    created_at: str
    updated_at: str


class MemoryList(BaseModel):
    items: list[Memory] = Field(description="most recently changed first")
    limit: int = Field(description="the most memories one person keeps (409 `memory_limit` past it)")


@router.get("", operation_id="list_memories", response_model=MemoryList)
async def list_memories(principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.list_memories(principal)


@router.post("", status_code=201, operation_id="create_memory", response_model=Memory)
async def create_memory(body: MemoryIn, principal: CurrentPrincipal) -> JSONResponse:
    """Add a memory (the same text twice is one memory: 200 with the existing one)."""
    memory, created = await service.add(principal, body.text)
    return JSONResponse(memory, status_code=201 if created else 200)


@router.patch("/{memory_id}", operation_id="update_memory", response_model=Memory)
async def update_memory(memory_id: UUID, body: MemoryIn, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.edit(principal, memory_id, body.text)


@router.delete("/{memory_id}", status_code=204, operation_id="delete_memory")
async def delete_memory(memory_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.delete(principal, memory_id)
    return Response(status_code=204)
