"""Delegation in the engine: when a tool round ends with `delegate` calls deferred, the run checkpoints
(`awaiting_children`), stores one child run per call and waits (`delegating`); the driver then runs the children
(inline: tasks in the worker; durable: their own executions, the parent's in a task-token wait). When every
child of the round has ended, their answers are the calls' results and the parent goes on."""

from __future__ import annotations

from typing import Any

from ag_ui.core import CustomEvent
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolReturn
from pydantic_ai.messages import ModelMessagesTypeAdapter

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.engine import subagent_events
from personal_agent.engine.drive import Drive, StepOutcome, dump_messages
from personal_agent.engine.finish import answer_text
from personal_agent.governance.budgets import BudgetExceeded
from personal_agent.runs import store
from personal_agent.spec.labels import result_metadata, run_labels
from personal_agent.spec.run_spec import RunSpec
from personal_agent.subagents.specs import DELEGATE_TOOL, child_spec


def delegations(requests: DeferredToolRequests) -> bool:
    return any(call.tool_name == DELEGATE_TOOL for call in requests.calls)


async def start_children(drive: Drive, requests: DeferredToolRequests) -> StepOutcome:
    """Checkpoint the waiting parent and store its children (idempotent: a retried step finds its own), then
    announce each on the parent's stream."""
    spec = drive.spec
    calls = [call for call in requests.calls if call.tool_name == DELEGATE_TOOL]
    labels = run_labels(spec, drive.completed)  # the children start with the parent's labels at the call
    children = [child_spec(spec, call.tool_call_id, call.args_as_dict(), labels=labels) for call in calls]
    ids = [str(child.run_id) for child in children]
    drive.seq += 1
    drive.state.update(children=ids, last_event_id=drive.emitter.last_id)
    async with org_transaction(spec.org_id) as conn:
        await store.save_checkpoint(
            conn, spec, drive.seq, "awaiting_children", dump_messages(drive.completed), drive.state
        )
        for child in children:
            if await store.get_run(conn, child.run_id) is None:
                await store.insert_run(conn, child)
        await store.mark_waiting(conn, spec.run_id)
    for child in children:
        await drive.emitter.emit(CustomEvent(name="subagent_started", value=subagent_events.started_value(child)))
    return drive.outcome("delegating", children=ids)


async def _result(conn: Conn, row: dict[str, Any]) -> Any:
    """The child's answer (or its error) as the `delegate` call's result, carrying the child's labels: a child
    that saw untrusted or classified content taints or raises its parent through it."""
    cp = await store.latest_checkpoint(conn, row["id"])
    messages = cp.messages if cp else []
    if row["status"] == "succeeded":
        value: Any = answer_text(messages)
    else:
        error = row["error"] or {"code": row["status"], "message": f"the sub-agent's run was {row['status']}"}
        # An error the parent model can handle (retry, do it itself, tell the user), not a failure of the parent.
        value = {"sub_agent_run_id": str(row["id"]), "status": row["status"], "error": error}
    labels = run_labels(RunSpec.model_validate(row["spec"]), ModelMessagesTypeAdapter.validate_python(messages))
    return ToolReturn(return_value=value, metadata=result_metadata(labels))


async def children_results(spec: RunSpec, cp: store.Checkpoint) -> DeferredToolResults | None:
    """The answers of the round's children, or None while any is still going. A child stopped by a budget stops
    the parent too (`BudgetExceeded`)."""
    ids = [str(i) for i in cp.state.get("children", [])]
    async with org_transaction(spec.org_id) as conn:
        rows = await store.round_children(conn, spec.run_id, ids)
        if len(rows) < len(ids) or any(row["status"] not in store.TERMINAL for row in rows):
            return None
        for row in rows:
            if (row["error"] or {}).get("code") == "budget_exceeded":
                raise BudgetExceeded(f"a sub-agent reached the budget: {row['error'].get('message', '')}")
        calls = {row["tool_call_id"]: await _result(conn, row) for row in rows}
        await store.mark_running(conn, spec.run_id)
    return DeferredToolResults(calls=calls)
