"""Knowledge feeds the classification gate: passages retrieved into a run raise its tier to their documents'
classification, and every model the run may call (its primary and fallbacks, snapshotted at launch) must pass the
raised tier before any passage is handed to it; otherwise the gate refuses (`classification_blocked`) and the
run fails without the passages reaching a model."""

from __future__ import annotations

from collections.abc import Iterable

from personal_agent.governance.tiers import classification_tier, enforce_classification
from personal_agent.spec.run_spec import RunSpec


def raised_tier(spec: RunSpec, classifications: Iterable[str]) -> int:
    """The run's routing tier raised to the retrieved documents' classifications."""
    return max([spec.routing_tier, *(classification_tier(c) for c in classifications)])


def gate_retrieved(spec: RunSpec, classifications: Iterable[str]) -> int:
    """The raised tier, after the gate passed it for every model of the run (raises `ClassificationBlocked`)."""
    tier = raised_tier(spec, classifications)
    if not spec.model_chain:  # a registered test model without a catalog entry: tier 0, as models/build.py has it
        enforce_classification(tier, 0, spec.model)
    for ref in spec.model_chain:
        enforce_classification(tier, ref.tier, ref.id)
    return tier
