"""Trust tiers and the one fail-closed classification gate.

Provider trust tier: 0 unregulated < 1 regulated < 2 internal. A chat's routing tier is its data
classification, raised to the org floor and to what its enabled tools require. Data never reaches
a provider below its tier.
"""

from __future__ import annotations

from collections.abc import Iterable

from personal_agent import otel_export
from personal_agent.errors import AppError

TIER_NAMES = {0: "unregulated", 1: "regulated", 2: "internal"}
CLASSIFICATION_TIERS = {"standard": 0, "confidential": 1, "restricted": 2}
MAX_TIER = 2


class ClassificationBlocked(AppError):
    """A model was asked for that the data's classification does not allow."""

    status = 403
    code = "classification_blocked"


def classification_tier(classification: str | None) -> int:
    """The tier a classification demands; an unknown classification demands the most (fail closed)."""
    if classification is None:
        return MAX_TIER
    return CLASSIFICATION_TIERS.get(classification, MAX_TIER)


def routing_tier(classification: str | None, org_floor: int | None, tool_tiers: Iterable[int | None] = ()) -> int:
    """The chat's data classification, raised to the org floor and to every enabled tool's requirement."""
    tiers = [classification_tier(classification), MAX_TIER if org_floor is None else org_floor]
    tiers += [MAX_TIER if t is None else t for t in tool_tiers]
    return min(MAX_TIER, max(tiers))


def tool_tier_passes(tool_trust_tier: int, run_tier: int) -> bool:
    """The tier gate for tools: a tool's source (an MCP server) must be trusted at least to the run's tier."""
    return tool_trust_tier >= run_tier


def passes(required_tier: int | None, provider_tier: int | None) -> bool:
    """True only when both tiers are known and the provider's is at least the required one."""
    if required_tier is None or provider_tier is None:
        return False
    return provider_tier >= required_tier


def enforce_classification(required_tier: int | None, provider_tier: int | None, model_id: str) -> None:
    """The gate, called wherever a model is resolved (launch, every engine step, triggers, sub-agents)."""
    allowed = passes(required_tier, provider_tier)
    if otel_export.enabled():
        _trace_gate(required_tier, provider_tier, model_id, allowed)
    if not allowed:
        raise ClassificationBlocked(
            f"{model_id} (tier {provider_tier}) may not receive data that needs tier {required_tier}",
            model=model_id,
            required_tier=required_tier,
            provider_tier=provider_tier,
        )


def _trace_gate(required_tier: int | None, provider_tier: int | None, model_id: str, allowed: bool) -> None:
    """The gate's decision as a span of its own (traces on): the model, both tiers (-1: unknown), allow or deny."""
    attributes = {
        "gen_ai.request.model": model_id,
        "pa.gate.required_tier": -1 if required_tier is None else required_tier,
        "pa.gate.provider_tier": -1 if provider_tier is None else provider_tier,
        "pa.gate.decision": "allow" if allowed else "deny",
    }
    with otel_export.span("gate classification", attributes):
        pass
