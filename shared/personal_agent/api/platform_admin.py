"""`/api/v1/platform`: what only a platform admin (`admin`) may do across every org: disable a user account."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel, Field

from personal_agent.api.deps import PlatformAdmin

router = APIRouter(prefix="/api/v1/platform", tags=["platform"])


class UserOut(BaseModel):
    user_id: UUID
    issuer: str
    subject: str
    email: str | None
    display_name: str | None
    disabled_at: datetime | None = Field(description="set while the account is disabled in every org")


@router.post(
    "/users/{user_id}/disable",
    operation_id="disable_user",
    responses={404: {"description": "`user_not_found`"}, 409: {"description": "`cannot_offboard_self`"}},
)
async def disable_user(user_id: UUID, principal: PlatformAdmin) -> UserOut:
    """Disable an account everywhere: every org, every OIDC and personal access token, from the next request."""
    from personal_agent.identity.members import set_user_disabled

    return UserOut(**await set_user_disabled(principal, user_id, disabled=True))


@router.post(
    "/users/{user_id}/enable", operation_id="enable_user", responses={404: {"description": "`user_not_found`"}}
)
async def enable_user(user_id: UUID, principal: PlatformAdmin) -> UserOut:
    """Enable a disabled account again (its memberships keep their own status)."""
    from personal_agent.identity.members import set_user_disabled

    return UserOut(**await set_user_disabled(principal, user_id, disabled=False))
