"""What a sub-agent tells its parent's stream (AG-UI CUSTOM events carrying the child's run id, so a client can
open the child's own stream): `subagent_started`, `subagent_progress` after each of its model responses,
`subagent_finished`, and its approval requests. A run without a parent emits none of these."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from ag_ui.core import CustomEvent

from personal_agent.engine.emitter import RunEmitter
from personal_agent.spec.run_spec import RunSpec

ANSWER_PREVIEW_CHARS = 2000


def stream_of(spec: RunSpec, run_id: UUID) -> RunEmitter:
    """An emitter on another run of the same tree (same org and owner): the parent's or the root's stream."""
    return RunEmitter(spec.model_copy(update={"run_id": run_id}))


def child_ref(spec: RunSpec) -> dict[str, Any]:
    """The child's ids, as every sub-agent event carries them."""
    delegation = spec.delegation
    return {
        "child_run_id": str(spec.run_id),
        "parent_run_id": str(spec.parent_run_id),
        "tool_call_id": delegation.tool_call_id if delegation else None,
        "events_url": f"/api/v1/runs/{spec.run_id}/events",
    }


def started_value(child: RunSpec) -> dict[str, Any]:
    delegation = child.delegation
    return {
        **child_ref(child),
        "task": delegation.task[:ANSWER_PREVIEW_CHARS] if delegation else "",
        "preset": delegation.preset if delegation else None,
        "model": child.model,
        "tools": [t.name for t in child.tools],
        "depth": child.depth,
    }


async def to_parent(spec: RunSpec, name: str, value: dict[str, Any]) -> None:
    """Emit `name` on the parent's stream (nothing for a run without a parent)."""
    if spec.parent_run_id is None:
        return
    await stream_of(spec, spec.parent_run_id).emit(CustomEvent(name=name, value={**child_ref(spec), **value}))


async def progress(spec: RunSpec, request_index: int, tool_names: list[str]) -> None:
    await to_parent(spec, "subagent_progress", {"request_index": request_index, "tool_calls": tool_names})


async def finished(
    spec: RunSpec, status: str, error: dict[str, Any] | None, answer: str | None, cost_usd: float | None = None
) -> None:
    value: dict[str, Any] = {"status": status}
    if cost_usd is not None:
        value["cost_usd"] = cost_usd
    if error:
        value["error"] = error
    if answer:
        value["answer"] = answer[:ANSWER_PREVIEW_CHARS]
    await to_parent(spec, "subagent_finished", value)


async def approval_requested(spec: RunSpec, value: dict[str, Any]) -> None:
    """A child's approval request, on its parent's stream and (deeper down) the root's: the person watching the
    tree sees it and can decide it; the parent waits for the child meanwhile."""
    if spec.parent_run_id is None:
        return
    event = {**child_ref(spec), **value}
    await stream_of(spec, spec.parent_run_id).emit(CustomEvent(name="approval_requested", value=event))
    if spec.root_run_id is not None and spec.root_run_id != spec.parent_run_id:
        await stream_of(spec, spec.root_run_id).emit(CustomEvent(name="approval_requested", value=event))
