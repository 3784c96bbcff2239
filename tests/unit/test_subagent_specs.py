"""A sub-agent's spec is never wider than its parent's: the `explore` preset gets read-only tools and the router's
cheaper model; the tier, classification, user and org are the parent's; escapes are refused."""

from __future__ import annotations

import uuid

import pytest

from personal_agent.spec.labels import CLEAN, Labels
from personal_agent.spec.run_spec import ModelRef, RunSpec, ToolRef
from personal_agent.subagents.specs import DelegationRefused, child_run_id, child_spec

CAPABLE = ModelRef(id="openai:gpt-4o", provider="openai", kind="openai", tier=2, model_name="gpt-4o")
CHEAP = ModelRef(id="openai:gpt-4o-mini", provider="openai", kind="openai", tier=2, model_name="gpt-4o-mini")


def parent(**extra: object) -> RunSpec:
    fields: dict[str, object] = {
        "run_id": uuid.uuid4(),
        "org_id": uuid.uuid4(),
        "user_id": uuid.uuid4(),
        "chat_id": uuid.uuid4(),
        "model": CAPABLE.id,
        "model_chain": (CAPABLE,),
        "router_model": CHEAP,
        "routing_tier": 1,
        "classification": "confidential",
        "instructions": "be useful",
        "tools": (
            ToolRef(name="current_time"),
            ToolRef(name="send_demo_message", acts=True),
            ToolRef(name="send_email", requires_approval=True, acts=True),
            ToolRef(name="delegate"),
        ),
        "mode": "inline",
    }
    fields.update(extra)
    return RunSpec.model_validate(fields)


def test_explore_gets_read_only_tools_and_the_routers_cheaper_model() -> None:
    spec = parent()
    child = child_spec(spec, "call_1", {"task": "look around", "preset": "explore"}, labels=CLEAN)
    assert [t.name for t in child.tools] == ["current_time"]
    assert (child.model, [m.id for m in child.model_chain], child.router_model) == (CHEAP.id, [CHEAP.id], None)
    assert (child.user_id, child.org_id, child.chat_id) == (spec.user_id, spec.org_id, spec.chat_id)
    assert (child.routing_tier, child.classification, child.depth) == (1, "confidential", 1)
    assert (child.parent_run_id, child.root_run_id, child.trigger_source) == (spec.run_id, spec.run_id, "subagent")
    assert child.run_id == child_run_id(spec.run_id, "call_1") != spec.run_id  # the same on a retried step
    assert child.delegation is not None and child.delegation.task == "look around"


def test_a_child_keeps_the_parents_chain_and_may_take_the_cheap_model() -> None:
    spec = parent()
    assert child_spec(spec, "a", {"task": "t"}, labels=CLEAN).model_chain == (CAPABLE,)
    assert child_spec(spec, "b", {"task": "t", "model": "cheap"}, labels=CLEAN).model_chain == (CHEAP,)
    assert [t.name for t in child_spec(spec, "c", {"task": "t", "tools": ["current_time"]}, labels=CLEAN).tools] == [
        "current_time"
    ]


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({"task": "t", "tools": ["web_fetch"]}, "not available here: web_fetch"),
        ({"task": "t", "model": "openai:o3"}, "'openai:o3' is not one"),
        ({"task": "t", "preset": "explore", "tools": ["send_demo_message"]}, "read-only tools only"),
    ],
)
def test_what_the_parent_could_not_do_is_refused(args: dict[str, object], why: str) -> None:
    with pytest.raises(DelegationRefused, match=why):
        child_spec(parent(), "x", args, labels=CLEAN)


def test_a_model_below_the_runs_tier_is_refused_even_if_the_parent_lists_it() -> None:
    low = ModelRef(id="cheap:tier0", provider="cheap", kind="openai", tier=0, model_name="tier0")
    with pytest.raises(DelegationRefused, match="may not receive this run's data"):
        child_spec(parent(router_model=low), "x", {"task": "t", "model": low.id}, labels=CLEAN)


def test_depth_is_refused_at_the_limit() -> None:
    deep = parent(depth=2)
    with pytest.raises(DelegationRefused, match="at most 2 deep"):
        child_spec(deep, "x", {"task": "t"}, labels=CLEAN)


def test_a_child_starts_with_its_parents_labels_and_its_models_pass_the_raised_tier() -> None:
    """Labels cross `delegate`: a child of a tainted parent starts tainted, and a passage of a higher tier that
    entered the parent raises the child's tier, so the cheaper model (tier 0 here) is refused for it."""
    cheap0 = CHEAP.model_copy(update={"tier": 0})
    spec = parent(routing_tier=0, classification="standard", router_model=cheap0)
    tainted = Labels(untrusted=True)
    child = child_spec(spec, "a", {"task": "t"}, labels=tainted)
    assert child.labels.untrusted and child.routing_tier == 0
    assert child_spec(spec, "b", {"task": "t", "model": "cheap"}, labels=CLEAN).model_chain == (cheap0,)
    with pytest.raises(DelegationRefused, match="tier 2"):
        child_spec(spec, "c", {"task": "t", "model": "cheap"}, labels=Labels(content_tier=2))
    with pytest.raises(DelegationRefused, match="tier 2"):
        child_spec(spec, "d", {"task": "t", "preset": "explore"}, labels=Labels(content_tier=2))
    raised = child_spec(spec, "e", {"task": "t"}, labels=Labels(content_tier=2))
    assert (raised.routing_tier, raised.labels.content_tier, raised.model_chain) == (2, 2, (CAPABLE,))
