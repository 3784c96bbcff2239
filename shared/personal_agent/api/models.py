"""The models a run may name (the offline demo model is labelled as such)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.models.catalog import available_models

router = APIRouter(prefix="/api/v1", tags=["models"])


@router.get("/models", operation_id="list_models")
async def list_models(principal: CurrentPrincipal) -> dict[str, Any]:
    return {"items": [asdict(m) for m in available_models()]}
