"""`/api/v1/org`: the current org's members as its admins see and offboard them (rules in identity/members.py), and
the erase of an offboarded member's content (`lifecycle/member_erase.py`)."""

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


class EraseMemberRequest(BaseModel):
    confirm: Literal["erase their data"] = Field(
        description="the words `erase their data`, so that nothing erases by accident"
    )


class MemberErasureOut(BaseModel):
    """An erase of a member's content: who, by whom, when and how much (never content)."""

    id: int
    user_id: UUID
    erased_by: UUID
    chats: int = Field(description="chats deleted, with their runs, messages and share links")
    memories: int
    files: int = Field(description="attachments and own knowledge documents deleted, every version of each object")
    exports: int = Field(description="the member's data exports deleted, their ZIPs with them")
    created_at: datetime


class MemberErasureList(BaseModel):
    items: list[MemberErasureOut]


@router.post(
    "/members/{user_id}/erase",
    operation_id="erase_org_member_data",
    responses={
        404: _REFUSALS[404],
        409: {"description": "`member_active`: remove or disable them first; `cannot_offboard_self`"},
    },
)
async def erase_member_data(user_id: UUID, body: EraseMemberRequest, principal: OrgAdmin) -> MemberErasureOut:
    """Erase a removed or disabled member's content in this org: their chats (runs, messages, share links),
    memories, files (every version of each object) and data exports. Recorded with counts, never content; the
    usage ledger and the approval audit keep their rows."""
    from dataclasses import asdict

    from personal_agent.lifecycle.member_erase import erase_member

    return MemberErasureOut(**asdict(await erase_member(principal, user_id)))


@router.get("/erasures", operation_id="list_member_erasures")
async def list_erasures(principal: OrgAdmin, limit: Annotated[int, Query(ge=1, le=500)] = 100) -> MemberErasureList:
    """The org's erasures of members' content, newest first (org admins only)."""
    from dataclasses import asdict

    from personal_agent.lifecycle.member_erase import erasures

    return MemberErasureList(items=[MemberErasureOut(**asdict(e)) for e in await erasures(principal, limit)])
