"""`/api/v1/org`: the current org as its admins see it."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel

from personal_agent.api.deps import OrgAdmin

router = APIRouter(prefix="/api/v1/org", tags=["org"])


class MemberOut(BaseModel):
    user_id: UUID
    subject: str
    email: str | None
    display_name: str | None
    roles: list[str]
    created_at: datetime


class MemberList(BaseModel):
    items: list[MemberOut]


@router.get("/members", operation_id="list_org_members")
async def list_members(principal: OrgAdmin) -> MemberList:
    """Everyone with a membership in the current org (org admins only)."""
    from personal_agent.identity.directory import list_members as members

    return MemberList(items=[MemberOut(**m) for m in await members(principal.org_id)])
