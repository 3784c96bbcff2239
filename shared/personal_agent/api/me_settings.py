"""`/api/v1/me/settings`: the caller's own preferences in the current org."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.identity import user_settings_store

router = APIRouter(prefix="/api/v1/me/settings", tags=["me"])


class UserSettings(BaseModel):
    default_model: str | None = Field(None, max_length=200, description="`auto`, a `provider:model`, or null")


@router.get("", operation_id="get_my_settings", response_model=UserSettings)
async def get_my_settings(principal: CurrentPrincipal) -> dict[str, Any]:
    return {"default_model": await user_settings_store.default_model(principal.org_id, principal.user_id)}


@router.put("", operation_id="put_my_settings", response_model=UserSettings)
async def put_my_settings(body: UserSettings, principal: CurrentPrincipal) -> dict[str, Any]:
    """Save the default model of the caller's runs (checked against the gate when a run starts)."""
    if body.default_model not in (None, "auto"):
        from personal_agent.errors import InvalidInput
        from personal_agent.governance.candidates import candidates

        if body.default_model not in {m.id for m in await candidates(principal.org_id)}:
            raise InvalidInput(f"model {body.default_model!r} is not available here", code="unknown_model")
    await user_settings_store.put_default_model(principal.org_id, principal.user_id, body.default_model)
    return body.model_dump()
