"""Attachments: register a file dropped into a chat's composer (201 with a presigned POST the browser uploads to),
read one, fetch its content (a short-lived presigned GET), remove one not sent yet. A message names them in
`POST /chats/{chat_id}/runs` (`attachments`)."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.attachments import service

router = APIRouter(prefix="/api/v1", tags=["attachments"])


class AttachmentIn(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"filename": "screenshot.png", "content_type": "image/png", "size": 48213}]}
    )

    filename: str = Field(min_length=1, max_length=255)
    content_type: str = Field(
        min_length=1,
        max_length=200,
        description="an image (PNG, JPEG, GIF, WebP; at most 10 MB) or a document (PDF, DOCX, HTML, Markdown,"
        " plain text; at most 25 MB); else 415 `unsupported_attachment`, 413 `attachment_too_large`",
    )
    size: int = Field(ge=0, description="bytes; the upload policy accepts exactly this many")


class AttachmentUpload(BaseModel):
    url: str
    fields: dict[str, str] = Field(description="form fields to send before the `file` field, unchanged")


class Attachment(BaseModel):
    id: UUID
    chat_id: UUID
    kind: Literal["image", "document"]
    filename: str
    content_type: str
    size: int
    run_id: UUID | None = Field(description="the run whose message carried it; null until sent")
    document_id: UUID | None = Field(description="its knowledge document (documents only)")
    created_at: str


class AttachmentCreated(Attachment):
    upload: AttachmentUpload = Field(description="a presigned POST: multipart form with `fields`, then `file`")


class AttachmentDownload(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "url": "https://documents.s3.amazonaws.com/attachments/…?X-Amz-Signature=…",
                    "expires_in": 300,
                    "content_type": "image/png",
                    "disposition": "inline",
                    "filename": "screenshot.png",
                }
            ]
        }
    )

    url: str = Field(description="a presigned GET of the file, valid `expires_in` seconds; no bearer token")
    expires_in: int
    content_type: str = Field(description="the `Content-Type` the URL answers with")
    disposition: Literal["inline", "attachment"] = Field(
        description="`inline` for a PNG, JPEG, GIF or WebP image; anything else is served as a download"
    )
    filename: str


@router.post(
    "/chats/{chat_id}/attachments", status_code=201, operation_id="create_attachment", response_model=AttachmentCreated
)
async def create_attachment(chat_id: UUID, body: AttachmentIn, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.create(principal, chat_id, body.filename, body.content_type, body.size)


@router.get("/attachments/{attachment_id}", operation_id="get_attachment", response_model=Attachment)
async def get_attachment(attachment_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.get(principal, attachment_id)


@router.get(
    "/attachments/{attachment_id}/download",
    operation_id="download_attachment",
    response_model=AttachmentDownload,
    responses={
        404: {"description": "`attachment_not_found`: no such file, or someone else's"},
        409: {"description": "`attachment_not_uploaded`: its upload has not finished"},
        410: {"description": "`attachment_gone`: the file is no longer stored (its knowledge document was deleted)"},
    },
)
async def download_attachment(attachment_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """Where the file's owner fetches it from: a URL on the documents bucket, not this API, so a large file does
    not pass through it. The bucket answers with `Content-Disposition: attachment` for all but the chat's image
    types, so an uploaded HTML page or SVG never runs as a page."""
    return await service.download(principal, attachment_id)


@router.delete("/attachments/{attachment_id}", status_code=204, operation_id="delete_attachment")
async def delete_attachment(attachment_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.delete(principal, attachment_id)
    return Response(status_code=204)
