"""Attachments: register a file dropped into a chat's composer (201 with a presigned POST the browser uploads to),
read one, remove one not sent yet. A message names them in `POST /chats/{chat_id}/runs` (`attachments`)."""

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


@router.post(
    "/chats/{chat_id}/attachments", status_code=201, operation_id="create_attachment", response_model=AttachmentCreated
)
async def create_attachment(chat_id: UUID, body: AttachmentIn, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.create(principal, chat_id, body.filename, body.content_type, body.size)


@router.get("/attachments/{attachment_id}", operation_id="get_attachment", response_model=Attachment)
async def get_attachment(attachment_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.get(principal, attachment_id)


@router.delete("/attachments/{attachment_id}", status_code=204, operation_id="delete_attachment")
async def delete_attachment(attachment_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.delete(principal, attachment_id)
    return Response(status_code=204)
