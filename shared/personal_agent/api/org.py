"""`/api/v1/org`: the current org's members as its admins see and offboard them (rules in identity/members.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import OrgAdmin

router = APIRouter(prefix="/api/v1/org", tags=["org"])

_REFUSALS: dict[int | str, dict[str, Any]] = {
    404: {"description": "no such member in this org (`member_not_found`)"},
    409: {"description": "`cannot_offboard_self`: another admin must do it"},
}


class MemberOut(BaseModel):
    user_id: UUID
    subject: str
    email: str | None
    display_name: str | None
    roles: list[str]
    status: Literal["active", "disabled", "removed"] = Field(
        description="`disabled` and `removed` members are refused in this org on their next request"
    )
    status_changed_at: datetime | None
    user_disabled: bool = Field(description="a platform admin disabled this account everywhere")
    created_at: datetime


class MemberList(BaseModel):
    items: list[MemberOut]


@router.get("/members", operation_id="list_org_members")
async def list_members(
    principal: OrgAdmin, include_removed: Annotated[bool, Query(description="also list removed members")] = False
) -> MemberList:
    """Everyone with a membership in the current org (org admins only)."""
    from personal_agent.identity.members import list_members as members

    rows = await members(principal.org_id, include_removed=include_removed)
    return MemberList(items=[MemberOut(**m) for m in rows])


@router.delete("/members/{user_id}", operation_id="remove_org_member", status_code=204, responses=_REFUSALS)
async def remove_member(user_id: UUID, principal: OrgAdmin) -> Response:
    """Remove a member: refused from their next request on, tokens in this org revoked, never re-created by
    a token that still names the org (an admin can re-admit them with `enable`)."""
    from personal_agent.identity.members import remove_member as remove

    await remove(principal, user_id)
    return Response(status_code=204)


@router.post("/members/{user_id}/disable", operation_id="disable_org_member", responses=_REFUSALS)
async def disable_member(user_id: UUID, principal: OrgAdmin) -> MemberOut:
    """Suspend a member in this org: every request of theirs here, tokens included, is refused until enabled."""
    from personal_agent.identity.members import disable_member as disable

    return MemberOut(**await disable(principal, user_id))


@router.post("/members/{user_id}/enable", operation_id="enable_org_member", responses={404: _REFUSALS[404]})
async def enable_member(user_id: UUID, principal: OrgAdmin) -> MemberOut:
    """Let a disabled or removed member act in this org again."""
    from personal_agent.identity.members import enable_member as enable

    return MemberOut(**await enable(principal, user_id))
