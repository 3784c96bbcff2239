"""Share links of chats (`chats.shares` says who sees what), and the org's data policy: public links allowed or
not, temporary chats' lifetime, retention by classification (`chats.retention`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from personal_agent.api.attachments import AttachmentDownload
from personal_agent.api.chats import Chat
from personal_agent.api.deps import CurrentPrincipal, OrgAdmin, get_principal
from personal_agent.attachments import shared_files
from personal_agent.chats import retention, shares
from personal_agent.chats.share_store import ShareRow
from personal_agent.chats.store import ChatRow
from personal_agent.identity.principal import Principal

router = APIRouter(tags=["shares"])


class ShareCreate(BaseModel):
    upto_message_id: int | None = Field(
        None, ge=1, description="the last message the snapshot shows (null: the chat's newest message)"
    )
    audience: Literal["org", "public"] = Field(
        "org", description="`org`: signed-in members of your org; `public`: anyone with the link (an admin allows it)"
    )
    expires_in_days: int | None = Field(None, ge=1, le=3650, description="null: until revoked")
    show_tools: bool = Field(False, description="show tool calls' arguments and results (hidden by default)")


class ShareCreated(BaseModel):
    id: UUID
    token: str = Field(description="the link's secret: shown once, never stored")
    url: str


class Share(BaseModel):
    id: UUID
    chat_id: UUID
    audience: Literal["org", "public"]
    title: str
    classification: str
    upto_message_id: int | None
    show_tools: bool
    expires_at: datetime | None
    revoked_at: datetime | None
    created_at: datetime


class ShareList(BaseModel):
    items: list[Share]


class SharedChat(BaseModel):
    id: UUID
    title: str
    classification: str
    audience: Literal["org", "public"]
    created_at: datetime
    expires_at: datetime | None
    show_tools: bool
    items: list[dict[str, Any]] = Field(
        description="the transcript items as they were when the link was made; an answer that drew on"
        " `search_knowledge` passages has `citations`: `[{number, label, document, page, section, text}]`"
    )


@router.post(
    "/api/v1/chats/{chat_id}/shares", status_code=201, operation_id="create_share", response_model=ShareCreated
)
async def create_share(chat_id: UUID, body: ShareCreate, principal: CurrentPrincipal, request: Request) -> Any:
    """Freeze the chat up to a message as a read-only link. 403 `share_restricted` (a restricted chat),
    `share_public_confidential`, `share_public_not_allowed`."""
    row, token = await shares.create_share(
        principal, chat_id, body.upto_message_id, body.audience, body.expires_in_days, body.show_tools
    )
    return {"id": row.id, "token": token, "url": str(request.base_url).rstrip("/") + f"/s/{token}"}


async def _viewer(request: Request) -> Principal | None:
    """The signed-in caller, or None for an anonymous one (a public link needs no sign-in)."""
    if request.headers.get("authorization") is None:
        return None
    return await get_principal(request)


@router.get("/api/v1/shares/{token}", operation_id="view_share", response_model=SharedChat)
async def view_share(token: str, request: Request) -> dict[str, Any]:
    """The snapshot behind a link (404 `share_not_found` for a revoked, expired or unknown link, and for a viewer
    outside the audience)."""
    return await shares.view_share(token[:200], await _viewer(request))


@router.get(
    "/api/v1/shares/{token}/attachments/{attachment_id}/download",
    operation_id="download_shared_attachment",
    response_model=AttachmentDownload,
    responses={404: {"description": "`share_not_found` (as for the snapshot); `attachment_not_found`: not its file"}},
)
async def download_shared_attachment(token: str, attachment_id: UUID, request: Request) -> dict[str, Any]:
    """A file the snapshot shows, for whoever may see the share: a short-lived presigned GET, as its owner gets."""
    return await shared_files.download(token[:200], attachment_id, await _viewer(request))


@router.post("/api/v1/shares/{token}/continue", status_code=201, operation_id="continue_share", response_model=Chat)
async def continue_share(token: str, principal: CurrentPrincipal) -> ChatRow:
    """Copy the shared conversation's text into a new chat of yours, to go on with it."""
    return await shares.continue_share(token[:200], principal)


@router.get("/api/v1/me/shares", operation_id="list_my_shares", response_model=ShareList)
async def list_my_shares(principal: CurrentPrincipal) -> dict[str, list[ShareRow]]:
    return {"items": await shares.my_shares(principal)}


@router.delete("/api/v1/shares/{share_id}", status_code=204, operation_id="revoke_share")
async def revoke_share(share_id: UUID, principal: CurrentPrincipal) -> Response:
    """Revoke a link of yours: it stops working at once."""
    await shares.revoke_share(principal, share_id)
    return Response(status_code=204)


class Retention(BaseModel):
    allow_public_shares: bool = False
    temporary_hours: int = Field(24, ge=1, le=8760, description="how long a temporary chat lives")
    standard_days: int | None = Field(None, ge=1, le=36500, description="null: kept forever")
    confidential_days: int | None = Field(None, ge=1, le=36500)
    restricted_days: int | None = Field(None, ge=1, le=36500)


class RetentionSweep(BaseModel):
    temporary_chats: int
    expired_chats: int
    expired_exports: int = Field(0, description="data exports past their time, deleted with their ZIP")
    expired_attachments: int = Field(0, description="chat attachments deleted with their object")
    expired_documents: int = Field(0, description="knowledge documents deleted with their object and chunks")
    expired_memories: int = Field(0, description="memories past their tier's classification's period")


@router.get("/api/v1/admin/retention", operation_id="get_retention", response_model=Retention)
async def get_retention(principal: OrgAdmin) -> Any:
    return await retention.get_policy(principal)


@router.put("/api/v1/admin/retention", operation_id="put_retention", response_model=Retention)
async def put_retention(body: Retention, principal: OrgAdmin) -> Any:
    return await retention.put_policy(principal, retention.DataPolicy(**body.model_dump()))


@router.post("/api/v1/admin/retention/run", operation_id="run_retention", response_model=RetentionSweep)
async def run_retention(principal: OrgAdmin) -> Any:
    """Run the org's retention sweep now (the daily job does the same): what it deleted, as counts."""
    from personal_agent.lifecycle import data_retention

    return await data_retention.sweep_org(principal.org_id, retention.clock())


class ShareAuditEntry(BaseModel):
    share_id: UUID
    chat_id: UUID
    actor_id: UUID | None = Field(description="who acted (null: someone outside the org, or not signed in)")
    action: Literal["created", "viewed", "continued", "revoked"]
    audience: Literal["org", "public"]
    created_at: datetime


class ShareAuditPage(BaseModel):
    items: list[ShareAuditEntry]


@router.get("/api/v1/admin/share-audit", operation_id="share_audit", response_model=ShareAuditPage)
async def share_audit(principal: OrgAdmin, limit: int = Query(200, ge=1, le=1000)) -> dict[str, Any]:
    """Every share link made, viewed, continued or revoked in the org, newest first (who and when; no content)."""
    return {"items": await shares.audit_trail(principal, limit)}
