"""The `delegate` tool: hand a task to a sub-agent, a child run of this one. The call is deferred
(`CallDeferred`): the engine starts the children of one model response together when its tool round ends
(`engine/delegation.py`), and each child's answer comes back as the call's result. What the run may not do —
nest deeper, start more children, give a tool or a model it does not have itself, grow its tree past the root's
limits (sub-agents, model requests) or its user past their running sub-agents — is refused here as a tool error
the model sees (`ModelRetry`), never as a crash."""

from __future__ import annotations

from typing import Literal

from pydantic_ai import CallDeferred, ModelRetry, RunContext
from pydantic_ai.messages import ModelResponse

from personal_agent.runs import store
from personal_agent.spec.labels import run_labels
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunLimits
from personal_agent.subagents.specs import DELEGATE_TOOL, DelegationRefused, child_run_id, child_spec


def _position(ctx: RunContext[RunDeps]) -> int:
    """This call's place among the `delegate` calls of the model response being run (0 for the first)."""
    response = next((m for m in reversed(ctx.messages) if isinstance(m, ModelResponse)), None)
    ids = [c.tool_call_id for c in response.tool_calls if c.tool_name == DELEGATE_TOOL] if response else []
    return ids.index(ctx.tool_call_id) if ctx.tool_call_id in ids else len(ids)


def _check_tree(limits: RunLimits, tree: store.TreeFanout, position: int) -> None:
    """The limits of the whole run tree (at its root) and of the user's running sub-agents."""
    if tree.descendants + position >= limits.max_tree_runs:
        raise ModelRetry(
            f"this task's runs may start at most {limits.max_tree_runs} sub-agents together; do the rest yourself"
        )
    if tree.model_requests >= limits.max_tree_model_requests:
        raise ModelRetry(
            f"this task's runs have used their {limits.max_tree_model_requests} model requests; "
            "no more sub-agents: finish with what you have"
        )
    if tree.user_active_children + position >= limits.max_user_active_children:
        raise ModelRetry(
            f"at most {limits.max_user_active_children} sub-agents may run at once for one person; "
            "wait for the running ones to finish or do the task yourself"
        )


async def delegate(
    ctx: RunContext[RunDeps],
    task: str,
    tools: list[str] | None = None,
    model: str | None = None,
    preset: Literal["explore"] | None = None,
    agent: str | None = None,
) -> str:
    """Hand a self-contained task to a sub-agent that works on it in parallel with other sub-agents started in
    the same response, and get its final answer back. `tools`: a subset of your own tools (default: all of
    them); `model`: `cheap` for the cheaper model (default: yours); `preset="explore"`: read-only tools and the
    cheaper model, for looking things up; `agent`: the slug of one of your agent's delegates, to run that agent."""
    spec = ctx.deps.spec
    limits = spec.limits
    if not task.strip():
        raise ModelRetry("give the sub-agent a task: `task` is empty")
    position = _position(ctx)
    if position >= limits.max_fanout:
        raise ModelRetry(
            f"one response may start at most {limits.max_fanout} sub-agents; this call was not started — "
            "wait for the others' answers, then delegate again"
        )
    async with ctx.deps.db() as conn:
        started = await store.count_children(conn, spec.run_id)
        tree = await store.tree_fanout(conn, spec.root_run_id or spec.run_id, spec.user_id)
    if started + position >= limits.max_children:
        raise ModelRetry(f"this run may start at most {limits.max_children} sub-agents in all; do the rest yourself")
    _check_tree(limits, tree, position)
    args = {"task": task, "tools": tools, "model": model, "preset": preset, "agent": agent}
    call_id = ctx.tool_call_id or ""
    try:
        child_spec(spec, call_id, args, labels=run_labels(spec, ctx.messages))
    except DelegationRefused as exc:
        raise ModelRetry(str(exc)) from exc
    raise CallDeferred(metadata={"child_run_id": str(child_run_id(spec.run_id, call_id))})
