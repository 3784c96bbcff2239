"""Model choice: `auto` ranks the models that pass the gate; an explicit model is used only if it
passes; a fallback chain of ranked compatible models prefers another provider; a cheap router."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from personal_agent.errors import InvalidInput
from personal_agent.governance.tiers import ClassificationBlocked, enforce_classification, passes
from personal_agent.models.catalog import ModelInfo

WRITER_TAGS = ("frontier", "coding", "reasoning")
ROUTER_TAGS = ("cheap", "fast")
LOCALITY_BONUS = {"local": 3, "region": 2, "remote": 0}
MAX_FALLBACKS = 2


@dataclass(frozen=True)
class ModelPlan:
    primary: ModelInfo
    fallbacks: tuple[ModelInfo, ...]
    router: ModelInfo | None
    tier: int


def score(info: ModelInfo, wanted: Sequence[str]) -> float:
    """Higher is better: wanted tags, then the admin's quality score, locality, and a lower price."""
    price = (info.input_price or 0.0) + (info.output_price or 0.0)
    return (
        10 * len(set(info.tags) & set(wanted))
        + info.quality
        + LOCALITY_BONUS.get(info.locality, 0)
        - min(5.0, price / 5)
    )


def rank(candidates: Sequence[ModelInfo], tier: int, wanted: Sequence[str] = WRITER_TAGS) -> list[ModelInfo]:
    """The candidates that pass the gate for `tier`, best first."""
    passing = [c for c in candidates if passes(tier, c.tier)]
    return sorted(passing, key=lambda c: (-score(c, wanted), c.id))


def fallback_chain(primary: ModelInfo, ranked: Sequence[ModelInfo]) -> tuple[ModelInfo, ...]:
    """Ranked alternatives, those of another provider first (a provider outage takes its models down together)."""
    others = [c for c in ranked if c.id != primary.id]
    diverse = [c for c in others if c.provider != primary.provider]
    same = [c for c in others if c.provider == primary.provider]
    return tuple((diverse + same)[:MAX_FALLBACKS])


def choose_router(candidates: Sequence[ModelInfo], tier: int, configured: str | None) -> ModelInfo | None:
    """The org's routing model if it passes the gate, else the best cheap/fast model that does, else none."""
    passing = rank(candidates, tier, ROUTER_TAGS)
    if configured:
        return next((c for c in passing if c.id == configured), None)
    cheap = [c for c in passing if set(c.tags) & set(ROUTER_TAGS)]
    return cheap[0] if cheap else None


def plan_models(
    candidates: Sequence[ModelInfo], requested: str, tier: int, routing_model: str | None = None
) -> ModelPlan:
    """The primary model, its fallbacks and the router for a run whose data needs `tier`."""
    ranked = rank(candidates, tier)
    if requested == "auto":
        if not ranked:
            raise ClassificationBlocked(
                f"no configured model may receive data that needs tier {tier}",
                code="no_model_for_tier",
                required_tier=tier,
            )
        primary = ranked[0]
    else:
        primary_or_none = next((c for c in candidates if c.id == requested), None)
        if primary_or_none is None:
            raise InvalidInput(f"model {requested!r} is not available here", code="unknown_model")
        primary = primary_or_none
        enforce_classification(tier, primary.tier, primary.id)
    return ModelPlan(primary, fallback_chain(primary, ranked), choose_router(candidates, tier, routing_model), tier)
