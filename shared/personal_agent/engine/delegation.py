"""Delegation in the engine: when a tool round ends with `delegate` calls deferred, the run checkpoints
(`awaiting_children`) and hands the driver its round of children (`delegating`, with one child RunSpec per call);
the driver stores them through the launch chokepoint and runs them (`lifecycle/child_runs.py`: inline as tasks in
the worker; durable as their own executions, the parent's in a task-token wait). A parent advanced again while
its round is not over hands the same children back, rebuilt from its checkpoint, so a driver that died between the
checkpoint and storing them stores them when the run resumes. When every child of the round has ended, their
answers are the calls' results and the parent goes on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolReturn
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.engine.drive import Drive, StepOutcome
from personal_agent.engine.finish import answer_text
from personal_agent.governance.budgets import BudgetExceeded
from personal_agent.runs import store
from personal_agent.spec.labels import result_metadata, run_labels
from personal_agent.spec.run_spec import RunSpec
from personal_agent.subagents.specs import DELEGATE_TOOL, child_run_id, child_spec


def delegations(requests: DeferredToolRequests) -> bool:
    return any(call.tool_name == DELEGATE_TOOL for call in requests.calls)


async def start_children(drive: Drive, requests: DeferredToolRequests) -> StepOutcome:
    """Checkpoint the parent with its round of children and hand their specs to the driver (which stores them)."""
    spec = drive.spec
    labels = run_labels(spec, drive.completed)  # the children start with the parent's labels at the call
    calls = [call for call in requests.calls if call.tool_name == DELEGATE_TOOL]
    children = tuple(child_spec(spec, call.tool_call_id, call.args_as_dict(), labels=labels) for call in calls)
    drive.seq += 1
    drive.state.update(children=[str(child.run_id) for child in children])
    await drive.checkpoint("awaiting_children")
    return drive.outcome("delegating", children=children)


def round_children(spec: RunSpec, messages: Sequence[ModelMessage], ids: Sequence[str]) -> tuple[RunSpec, ...]:
    """The children `ids` of the parent's round, rebuilt from its `awaiting_children` checkpoint: the same specs
    `start_children` made (a child's id comes from its call's id, its spec from the call and the labels of the
    messages), in the same order."""
    labels = run_labels(spec, messages)
    calls = {
        str(child_run_id(spec.run_id, call.tool_call_id)): call
        for message in messages
        if isinstance(message, ModelResponse)
        for call in message.tool_calls
        if call.tool_name == DELEGATE_TOOL
    }
    return tuple(child_spec(spec, calls[i].tool_call_id, calls[i].args_as_dict(), labels=labels) for i in ids)


async def _result(conn: Conn, row: store.RoundChild) -> Any:
    """The child's answer (or its error) as the `delegate` call's result, carrying the child's labels: a child
    that saw untrusted or classified content taints or raises its parent through it."""
    cp = await store.latest_checkpoint(conn, row.id)
    messages = cp.messages if cp else []
    if row.status == "succeeded":
        value: Any = answer_text(messages)
    else:
        error = row.error or {"code": row.status, "message": f"the sub-agent's run was {row.status}"}
        # An error the parent model can handle (retry, do it itself, tell the user), not a failure of the parent.
        value = {"sub_agent_run_id": str(row.id), "status": row.status, "error": error}
    labels = run_labels(RunSpec.model_validate(row.spec), ModelMessagesTypeAdapter.validate_python(messages))
    return ToolReturn(return_value=value, metadata=result_metadata(labels))


async def children_results(spec: RunSpec, cp: store.Checkpoint) -> DeferredToolResults | None:
    """The answers of the round's children, or None while any is still going. A child stopped by a budget stops
    the parent too (`BudgetExceeded`)."""
    ids = [str(i) for i in cp.state.get("children", [])]
    async with org_transaction(spec.org_id) as conn:
        rows = await store.round_children(conn, spec.run_id, ids)
        if len(rows) < len(ids) or any(row.status not in store.TERMINAL for row in rows):
            return None
        for row in rows:
            if (row.error or {}).get("code") == "budget_exceeded":
                raise BudgetExceeded(f"a sub-agent reached the budget: {(row.error or {}).get('message', '')}")
        calls = {row.tool_call_id: await _result(conn, row) for row in rows}
        await store.mark_running(conn, spec.run_id)
    return DeferredToolResults(calls=calls)
