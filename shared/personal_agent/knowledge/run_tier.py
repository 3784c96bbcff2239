"""Knowledge feeds the classification gate: passages retrieved into a run raise its tier to their documents'
classification, and every model the run may call (its primary and fallbacks, snapshotted at launch) must pass the
raised tier before any passage is handed to it. A passage some model of the run may not receive is left out of the
result (`receivable`), so a colleague's restricted document cannot make everyone's search fail; what is kept still
goes through the gate (`gate_retrieved`), which fails the run (`classification_blocked`) rather than hand a
passage over should the two ever disagree."""

from __future__ import annotations

from collections.abc import Iterable

from personal_agent.governance.tiers import classification_tier, enforce_classification, passes
from personal_agent.spec.run_spec import RunSpec


def raised_tier(spec: RunSpec, classifications: Iterable[str]) -> int:
    """The run's routing tier raised to the retrieved documents' classifications."""
    return max([spec.routing_tier, *(classification_tier(c) for c in classifications)])


def gate_retrieved(spec: RunSpec, classifications: Iterable[str]) -> int:
    """The raised tier, after the gate passed it for every model of the run (raises `ClassificationBlocked`)."""
    tier = raised_tier(spec, classifications)
    if not spec.model_chain:  # a registered test model without a catalog entry: tier 0, as model_build.py has it
        enforce_classification(tier, 0, spec.model)
    for ref in spec.model_chain:
        enforce_classification(tier, ref.tier, ref.id)
    return tier


def receivable(spec: RunSpec, classification: str) -> bool:
    """Every model of the run may receive a passage of this classification (with the run's own tier)."""
    tier = raised_tier(spec, [classification])
    if not spec.model_chain:
        return passes(tier, 0)
    return all(passes(tier, ref.tier) for ref in spec.model_chain)
