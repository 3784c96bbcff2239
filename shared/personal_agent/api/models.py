"""The models a run may name in the caller's org, with their trust tier (the offline demo is labelled)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.governance.candidates import candidates
from personal_agent.governance.selection import rank
from personal_agent.governance.tiers import TIER_NAMES

router = APIRouter(prefix="/api/v1", tags=["models"])


class ModelOut(BaseModel):
    id: str = Field(description="`auto`, or `provider:model` as a run names it")
    label: str
    provider: str
    offline_demo: bool
    tier: int | None
    tags: list[str]
    tier_name: str | None = None
    quality: int | None = None
    locality: str | None = None


class ModelList(BaseModel):
    items: list[ModelOut]


@router.get("/models", operation_id="list_models", response_model=ModelList, response_model_exclude_unset=True)
async def list_models(principal: CurrentPrincipal) -> dict[str, Any]:
    """`auto` first, then every model best first (the gate still decides per chat at launch)."""
    items: list[dict[str, Any]] = [
        {
            "id": "auto",
            "label": "Auto (best allowed model)",
            "provider": "auto",
            "offline_demo": False,
            "tier": None,
            "tags": [],
        }
    ]
    for info in rank(await candidates(principal.org_id), 0):
        items.append(
            {
                "id": info.id,
                "label": info.label,
                "provider": info.provider,
                "offline_demo": info.offline_demo,
                "tier": info.tier,
                "tier_name": TIER_NAMES[info.tier],
                "tags": list(info.tags),
                "quality": info.quality,
                "locality": info.locality,
            }
        )
    return {"items": items}
