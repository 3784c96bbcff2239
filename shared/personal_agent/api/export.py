"""A person's chat data: download it all (`GET /api/v1/me/export`, a ZIP of JSON and Markdown) and erase it
(`POST /api/v1/me/erase`); `lifecycle.user_data` says what is in it and what stays."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.errors import InvalidInput

router = APIRouter(prefix="/api/v1/me", tags=["me"])


@router.get(
    "/export",
    operation_id="export_my_data",
    response_class=Response,
    responses={
        200: {
            "content": {"application/zip": {"schema": {"type": "string"}}},
            "description": "a ZIP of JSON and Markdown",
        }
    },
)
async def export_my_data(principal: CurrentPrincipal) -> Response:
    """All your chats (every branch), memories and share links, as a ZIP to download."""
    from personal_agent.lifecycle.user_data import export_zip

    body = await export_zip(principal)
    name = f"personal-agent-export-{datetime.now(UTC):%Y%m%d}.zip"
    return Response(
        body, media_type="application/zip", headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )


class EraseRequest(BaseModel):
    confirm: Literal["erase my data"] = Field(
        description="the words `erase my data`, so that nothing erases by accident"
    )


class Erased(BaseModel):
    chats: int
    memories: int


@router.post("/erase", operation_id="erase_my_data", response_model=Erased)
async def erase_my_data(body: EraseRequest, principal: CurrentPrincipal) -> dict[str, int]:
    """Delete all your chats (with their runs, messages and share links) and memories. The usage ledger keeps its
    rows: they hold no content."""
    from personal_agent.lifecycle.user_data import erase

    return await erase(principal)


MAX_IMPORT_BYTES = 5 * 1024 * 1024


class Imported(BaseModel):
    chat_ids: list[str]


@router.post(
    "/import",
    operation_id="import_chats",
    response_model=Imported,
    status_code=201,
    openapi_extra={"requestBody": {"content": {"application/json": {"schema": {"type": "array"}}}, "required": True}},
)
async def import_chats(
    request: Request,
    principal: CurrentPrincipal,
    format: Literal["chatgpt", "claude"] = Query(description="whose `conversations.json` the body is"),
) -> dict[str, list[str]]:
    """Another assistant's export (its `conversations.json` as the body, at most 5 MB) as new chats of yours:
    the user's and the assistant's text, ChatGPT's branches kept. All or nothing."""
    import json

    from personal_agent.lifecycle.chat_import import import_conversations

    raw = await request.body()
    if len(raw) > MAX_IMPORT_BYTES:
        raise InvalidInput("the file is larger than 5 MB", code="import_too_large")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise InvalidInput("the body is not JSON", code="import_invalid") from exc
    return {"chat_ids": [str(i) for i in await import_conversations(principal, format, data)]}
