"""A run with an image needs a model that sees: the `vision` tag. Its whole chain (primary and fallbacks) is
chosen among vision models, explicit or `auto`; the router, which reads only text, is chosen among all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from personal_agent.errors import InvalidInput
from personal_agent.governance.selection import ModelPlan, choose_router, plan_models
from personal_agent.models.catalog import ModelInfo

VISION_TAG = "vision"


def plan_for_images(candidates: Sequence[ModelInfo], requested: str, tier: int, routing_model: str | None) -> ModelPlan:
    """The model plan of a run whose message carries images; 422 when no model may see them."""
    seeing = [c for c in candidates if VISION_TAG in c.tags]
    if requested != "auto" and any(c.id == requested for c in candidates) and requested not in {c.id for c in seeing}:
        raise InvalidInput(
            f"model {requested!r} cannot read images: pick a model tagged `vision`, or remove the image",
            code="model_lacks_vision",
        )
    if not seeing:
        raise InvalidInput(
            "no model here can read images: ask an admin to enable a vision model, or remove the image",
            code="no_vision_model",
        )
    plan = plan_models(seeing, requested, tier)
    return replace(plan, router=choose_router(candidates, tier, routing_model))
