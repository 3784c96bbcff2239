"""A person's chat data: export it all (`POST /api/v1/me/export` → 202, then `GET /api/v1/me/exports/{id}` until
its ZIP of JSON and Markdown can be downloaded from the bucket; an org admin the org's the same way under
`/api/v1/admin`), erase it (`POST /api/v1/me/erase`) and import an export (`POST /api/v1/me/import`, ours or another
assistant's); `lifecycle.user_data` says what is in an export and what stays, `lifecycle.archive_import` what comes
in."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal, OrgAdmin
from personal_agent.api.import_upload import REQUEST_BODY
from personal_agent.identity.principal import Principal

router = APIRouter(prefix="/api/v1/me", tags=["me"])


class ExportStarted(BaseModel):
    id: UUID
    status: Literal["pending", "running", "ready", "failed"]


class ExportStatus(BaseModel):
    id: UUID
    status: Literal["pending", "running", "ready", "failed"]
    scope: Literal["user", "org"]
    created_at: datetime
    finished_at: datetime | None
    expires_at: datetime = Field(description="the ZIP is deleted after this")
    size_bytes: int | None
    error: str | None = Field(description="why it failed (an error class, never content)")
    download_url: str | None = Field(description="when ready: a presigned GET of the ZIP; no bearer token")
    download_expires_in: int | None = Field(description="seconds the download URL is valid")


async def _start(principal: Principal, scope: Literal["user", "org"], location: str) -> Response:
    from personal_agent.lifecycle.data_exports import request

    export = await request(principal, scope)
    body = ExportStarted(id=export.id, status=export.status)
    return Response(
        body.model_dump_json(),
        status_code=202,
        media_type="application/json",
        headers={"Location": f"{location}/{export.id}"},
    )


_STARTED: dict[int | str, dict[str, Any]] = {
    202: {"model": ExportStarted, "description": "the export is being built; poll its `Location`"}
}


@router.post("/export", operation_id="export_my_data", status_code=202, response_class=Response, responses=_STARTED)
async def export_my_data(principal: CurrentPrincipal) -> Response:
    """Start an export of all your chats (every branch), memories and share links as a ZIP; poll
    `GET /api/v1/me/exports/{id}` for its download link."""
    return await _start(principal, "user", "/api/v1/me/exports")


@router.get("/exports/{export_id}", operation_id="get_my_export", response_model=ExportStatus)
async def get_my_export(export_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """An export of yours: its status and, once ready, a short-lived download link."""
    from personal_agent.lifecycle.data_exports import status

    return await status(principal, "user", export_id)


admin_router = APIRouter(prefix="/api/v1/admin", tags=["admin"])


@admin_router.post(
    "/export", operation_id="export_org_data", status_code=202, response_class=Response, responses=_STARTED
)
async def export_org_data(principal: OrgAdmin) -> Response:
    """Start an export of the org's data (every member's chats with all branches, and share links; not members'
    private memories) as a ZIP; poll `GET /api/v1/admin/exports/{id}`."""
    return await _start(principal, "org", "/api/v1/admin/exports")


@admin_router.get("/exports/{org_export_id}", operation_id="get_org_export", response_model=ExportStatus)
async def get_org_export(org_export_id: UUID, principal: OrgAdmin) -> dict[str, Any]:
    """An org export you started: its status and, once ready, a short-lived download link."""
    from personal_agent.lifecycle.data_exports import status

    return await status(principal, "org", org_export_id)


class EraseRequest(BaseModel):
    confirm: Literal["erase my data"] = Field(
        description="the words `erase my data`, so that nothing erases by accident"
    )


class Erased(BaseModel):
    chats: int
    memories: int
    files: int = Field(description="attachments and own knowledge documents deleted, their objects with them")
    exports: int = Field(0, description="your data exports deleted (their ZIPs with them)")


@router.post("/erase", operation_id="erase_my_data", response_model=Erased)
async def erase_my_data(body: EraseRequest, principal: CurrentPrincipal) -> dict[str, int]:
    """Delete all your chats (with their runs, messages and share links), memories, files (attachments and your
    own knowledge documents, every version of their objects) and data exports. The usage ledger keeps its rows: they
    hold no content."""
    from personal_agent.lifecycle.user_data import erase

    return await erase(principal)


class Imported(BaseModel):
    chat_ids: list[str]


@router.post(
    "/import",
    operation_id="import_chats",
    response_model=Imported,
    status_code=201,
    responses={
        413: {"description": "`import_too_large`: over 5 MB, or a ZIP past its bounds"},
        422: {"description": "`import_invalid`, `import_format_unknown`"},
    },
    openapi_extra={"requestBody": REQUEST_BODY},
)
async def import_chats(
    request: Request,
    principal: CurrentPrincipal,
    format: Literal["chatgpt", "claude", "personal-agent"] | None = Query(
        None, description="whose export the body is, when the body is the file itself (a form says it in `format`)"
    ),
) -> dict[str, list[str]]:
    """An export as new chats of yours, all or nothing: ChatGPT's or Claude's (their export ZIP or its
    `conversations.json`: the user's and the assistant's text, ChatGPT's branches kept) or ours (the ZIP of
    `POST /api/v1/me/export`: every chat with all its branches). A multipart form (`format`, `file`) or the file
    itself as the body with `?format=`; at most 5 MB."""
    from personal_agent.api.import_upload import read_upload
    from personal_agent.lifecycle.archive_import import import_file

    kind, data = await read_upload(request, format)
    return {"chat_ids": [str(i) for i in await import_file(principal, kind, data)]}
