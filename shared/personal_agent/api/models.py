"""The models a run may name in the caller's org, with their trust tier (the offline demo is labelled)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.governance.catalog import candidates
from personal_agent.governance.selection import rank
from personal_agent.governance.tiers import TIER_NAMES

router = APIRouter(prefix="/api/v1", tags=["models"])


@router.get("/models", operation_id="list_models")
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
