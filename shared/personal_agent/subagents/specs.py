"""A sub-agent's RunSpec, derived from its parent's and never wider: a subset of the parent's tools, one of the
parent's models (or the router's cheaper one), the parent's user, org, classification, routing tier, limits and
approval policy, and its labels as they stand at the call (a child of a tainted parent starts tainted). What the
parent asked for that it could not do itself is refused (`DelegationRefused`), and the `delegate` tool turns that
into a tool error the model sees."""

from __future__ import annotations

import uuid
from typing import Any, Literal
from uuid import UUID

from personal_agent.governance.tiers import passes
from personal_agent.spec.labels import Labels
from personal_agent.spec.run_spec import AgentRef, DelegateAgent, Delegation, ModelRef, RunSpec, ToolRef

DELEGATE_TOOL = "delegate"
CHEAP = "cheap"
Preset = Literal["explore"]

SUBAGENT_INSTRUCTIONS = (
    "You are a sub-agent of Personal Agent. Do the task you are given with the tools you have, then answer with "
    "the result only, concisely; another agent reads your answer. Never invent tool results."
)
EXPLORE_INSTRUCTIONS = (
    "You are an exploring sub-agent of Personal Agent: look things up with your read-only tools and report what "
    "you found, concisely, with where it came from. You cannot act on anything."
)


class DelegationRefused(Exception):
    """The `delegate` call asked for more than its run may give (a tool, a model tier, depth or fan-out)."""


def child_run_id(parent_run_id: UUID, tool_call_id: str) -> UUID:
    """The child's id, the same for every retry of the parent's step (a retried step finds its own child)."""
    return uuid.uuid5(parent_run_id, f"delegate:{tool_call_id}")


def read_only(tool: ToolRef) -> bool:
    """An `explore` child's tools: nothing that acts, needs a person, or starts more runs."""
    return not (tool.acts or tool.requires_approval) and tool.name != DELEGATE_TOOL


def check_depth(parent: RunSpec) -> None:
    if parent.depth >= parent.limits.max_depth:
        raise DelegationRefused(
            f"sub-agents may nest at most {parent.limits.max_depth} deep; this run is at depth {parent.depth}, "
            "so it cannot delegate: do the task yourself"
        )


def child_tools(parent: RunSpec, requested: list[str] | None, preset: Preset | None) -> tuple[ToolRef, ...]:
    """The child's toolset: what was requested, every tool of the parent's otherwise (`explore`: read-only)."""
    own = {t.name: t for t in parent.tools}
    if requested is not None:
        outside = sorted(set(requested) - set(own))
        if outside:
            raise DelegationRefused(
                f"a sub-agent can only get tools this run has; not available here: {', '.join(outside)}"
            )
        tools = tuple(own[name] for name in dict.fromkeys(requested))
    else:
        tools = tuple(own.values())
    if preset == "explore":
        acting = sorted(t.name for t in tools if not read_only(t) and requested is not None)
        if acting:
            raise DelegationRefused(
                f"an explore sub-agent gets read-only tools only; not read-only: {', '.join(acting)}"
            )
        tools = tuple(t for t in tools if read_only(t))
    return tools


def _passing(models: tuple[ModelRef, ...], tier: int, asked: str) -> tuple[ModelRef, ...]:
    """The models that may receive data of `tier` (the classification gate); none: the delegation is refused."""
    kept = tuple(ref for ref in models if passes(tier, ref.tier))
    if models and not kept:
        names = ", ".join(f"{ref.id} (tier {ref.tier})" for ref in models)
        raise DelegationRefused(f"{asked}: {names} may not receive this run's data (tier {tier})")
    return kept


def child_models(parent: RunSpec, model: str | None, preset: Preset | None, tier: int) -> tuple[ModelRef, ...]:
    """The parent's model chain; `cheap` (and `explore` by default) the router's model; an explicit id only if
    the parent may call it. Every model must pass `tier`, the parent's routing tier raised to its content now."""
    if model is None and preset != "explore":
        return _passing(parent.model_chain, tier, "the sub-agent's models")
    if model is None or model == CHEAP:
        cheap = (parent.router_model,) if parent.router_model is not None else parent.model_chain
        return _passing(cheap, tier, "the cheaper model")
    allowed = {ref.id: ref for ref in (*parent.model_chain, *([parent.router_model] if parent.router_model else []))}
    ref = allowed.get(model)
    if ref is None:
        raise DelegationRefused(
            f"a sub-agent can only use a model this run may use ({', '.join(allowed) or 'none'}, or `cheap`); "
            f"{model!r} is not one"
        )
    if not passes(tier, ref.tier):
        raise DelegationRefused(f"{model} (tier {ref.tier}) may not receive this run's data (tier {tier})")
    return (ref,)


def named_delegate(parent: RunSpec, slug: str) -> DelegateAgent:
    """One of the parent's agent's delegates (`delegate(agent=slug)`), as snapshotted at the parent's launch."""
    known = parent.agent.delegate_agents if parent.agent else ()
    found = next((d for d in known if d.slug == slug), None)
    if found is None:
        names = ", ".join(d.slug for d in known) or "none"
        raise DelegationRefused(f"{slug!r} is not one of this agent's delegates ({names})")
    return found


def _delegate_ask(parent: RunSpec, named: DelegateAgent, args: dict[str, Any]) -> tuple[list[str] | None, str | None]:
    """A named delegate's tools (those of its own the parent has; the call's `tools` narrow them) and its model
    (its own when the parent may call it, else the call's or the parent's)."""
    own = {t.name for t in parent.tools}
    requested = args.get("tools")
    if requested is None and named.tools is not None:
        requested = [name for name in named.tools if name in own]
    allowed = {ref.id for ref in parent.model_chain}
    model = args.get("model") or (named.model if named.model in allowed else None)
    return (list(requested) if requested is not None else None), model


def _agent_ref(named: DelegateAgent | None) -> AgentRef | None:
    return AgentRef(id=named.id, slug=named.slug, version=named.version) if named else None


def child_spec(parent: RunSpec, tool_call_id: str, args: dict[str, Any], *, labels: Labels) -> RunSpec:
    """The child run of one `delegate` call (validated again: a retried step builds the same child). `labels`: the
    parent's labels at the call (`run_labels` of its messages): the child starts with them, so it is tainted when
    the parent is, and its models pass the tier the parent's content has reached."""
    check_depth(parent)
    labels = parent.labels.join(labels)
    tier = max(parent.routing_tier, labels.content_tier)
    preset: Preset | None = "explore" if args.get("preset") == "explore" else None
    named = named_delegate(parent, str(args["agent"])) if args.get("agent") else None
    requested, model = _delegate_ask(parent, named, args) if named else (args.get("tools"), args.get("model"))
    tools = child_tools(parent, list(requested) if requested is not None else None, preset)
    models = child_models(parent, model, preset, tier)
    instructions = EXPLORE_INSTRUCTIONS if preset == "explore" else SUBAGENT_INSTRUCTIONS
    servers = {t.server_id for t in tools if t.server_id is not None}
    return parent.model_copy(
        update={
            "run_id": child_run_id(parent.run_id, tool_call_id),
            "model": models[0].id if models else parent.model,
            "model_chain": models,
            "routing_tier": tier,
            "labels": labels,
            "router_model": None,  # the parent's routing classification is not re-run (nor paid) per child
            "instructions": named.instructions if named else instructions,
            "agent": _agent_ref(named),  # a named delegate's version; a plain sub-agent is no agent of its own
            "tools": tools,
            "mcp_servers": tuple(s for s in parent.mcp_servers if s.id in servers),
            "gated_tools": (),
            "trigger_source": "subagent",
            "parent_run_id": parent.run_id,
            "root_run_id": parent.root_run_id or parent.run_id,
            "history": "none",
            "depth": parent.depth + 1,
            "delegation": Delegation(task=str(args.get("task", "")), tool_call_id=tool_call_id, preset=preset),
        }
    )
