"""The classification gate: a property test over tiers and requests, and a scan proving every model is
built behind the gate."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from personal_agent.governance.selection import plan_models
from personal_agent.governance.tiers import ClassificationBlocked, classification_tier, passes, routing_tier
from personal_agent.models.catalog import ModelInfo

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = ["p0", "p1", "p2", "p3"]
TAGS = ["frontier", "coding", "reasoning", "vision", "fast", "cheap"]

model_st = st.builds(
    lambda i, provider, tier, tags, quality, price: ModelInfo(
        id=f"{provider}:m{i}",
        label="m",
        provider=provider,
        kind="openai",
        tier=tier,
        model_name=f"m{i}",
        tags=tuple(tags),
        quality=quality,
        input_price=price,
        output_price=price,
    ),
    st.integers(0, 50),
    st.sampled_from(PROVIDERS),
    st.integers(0, 2),
    st.lists(st.sampled_from(TAGS), max_size=3),
    st.integers(0, 20),
    st.one_of(st.none(), st.floats(0, 100)),
)


@settings(max_examples=400, deadline=None)
@given(
    classification=st.sampled_from(["standard", "confidential", "restricted", "unknown-label", None]),
    floor=st.one_of(st.none(), st.integers(0, 2)),
    tool_tiers=st.lists(st.one_of(st.none(), st.integers(0, 2)), max_size=4),
    models=st.lists(model_st, min_size=0, max_size=12, unique_by=lambda m: m.id),
    requested_index=st.one_of(st.none(), st.integers(0, 11)),
    routing_model_index=st.one_of(st.none(), st.integers(0, 11)),
)
def test_no_combination_lets_confidential_data_reach_a_tier_0_provider(
    classification: str | None,
    floor: int | None,
    tool_tiers: list[int | None],
    models: list[ModelInfo],
    requested_index: int | None,
    routing_model_index: int | None,
) -> None:
    tier = routing_tier(classification, floor, tool_tiers)
    if classification not in ("standard",):
        assert tier >= 1  # confidential, restricted and anything unknown all demand a regulated provider
    requested = "auto" if requested_index is None or requested_index >= len(models) else models[requested_index].id
    routing_model = None
    if routing_model_index is not None and routing_model_index < len(models):
        routing_model = models[routing_model_index].id
    try:
        plan = plan_models(models, requested, tier, routing_model)
    except ClassificationBlocked:
        return
    reachable = [plan.primary, *plan.fallbacks, *([plan.router] if plan.router else [])]
    assert all(m.tier >= tier for m in reachable)
    if classification in ("confidential", "restricted", "unknown-label", None):
        assert all(m.tier >= 1 for m in reachable)


def test_explicit_tier_0_model_is_refused_for_confidential_data() -> None:
    cheap = ModelInfo("open:m", "m", "open", "openai", 0, "m")
    with pytest.raises(ClassificationBlocked):
        plan_models([cheap], "open:m", classification_tier("confidential"))


def test_unknown_tiers_fail_closed() -> None:
    assert not passes(None, 2) and not passes(0, None)
    assert routing_tier("standard", None) == 2
    assert routing_tier("standard", 0, [None]) == 2


MODEL_CONSTRUCTORS = re.compile(
    r"\b(infer_model|OpenAIChatModel|OpenAIResponsesModel|AnthropicModel|BedrockConverseModel|GoogleModel|"
    r"FallbackModel|registered_factory|demo_model|build_one|build_run_model)\s*\("
)


def test_every_model_resolution_entry_point_goes_through_the_gate() -> None:
    """Models are built only in governance/model_build.py (where each passes `enforce_classification`), and the
    engine, the router and every driver reach them only through it."""
    library = ROOT / "shared" / "personal_agent"
    allowed = {
        library / "governance" / "model_build.py",  # the gate itself
        library / "models" / "demo.py",  # defines demo_model
        library / "models" / "catalog.py",  # defines registered_factory
    }
    callers: dict[str, list[str]] = {}
    for path in [*library.rglob("*.py"), *(ROOT / "functions").rglob("*.py")]:
        for match in MODEL_CONSTRUCTORS.finditer(path.read_text()):
            if path not in allowed:
                callers.setdefault(match.group(1), []).append(str(path.relative_to(ROOT)))
    # Only the gated builders are called from outside governance/model_build.py.
    assert set(callers) <= {"build_one", "build_run_model"}, callers
    build = (library / "governance" / "model_build.py").read_text()
    body = build[build.index("async def build_one") : build.index("async def build_run_model")]
    assert body.index("enforce_classification(") < body.index("factory = registered_factory")
    # Inline, durable and triggered runs all resolve their model plan in launch_run and build it in the engine.
    assert "plan_models(" in (library / "lifecycle" / "launch.py").read_text()
    assert "build_run_model(" in (library / "engine" / "agent_factory.py").read_text()
