"""The engine: advance a run by steps over pydantic-ai, checkpointing after every model response and
every tool round, emitting AG-UI events, and recording usage per ModelResponse.

Both drivers call `advance`: inline loops it once with no time budget; a durable Task calls it with
its budget and gets back a small outcome for the state machine's Choice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID

from ag_ui.core import (
    CustomEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StepFinishedEvent,
    StepStartedEvent,
)
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.exceptions import AgentRunError, ModelHTTPError, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart
from pydantic_ai.usage import UsageLimits

from personal_agent import observability
from personal_agent.db import org_transaction
from personal_agent.engine import usage
from personal_agent.engine.agent_factory import build_agent
from personal_agent.engine.agui import AgUiTranslator
from personal_agent.engine.cancellation import CancelWatch, RunCancelled, clear_local_cancel
from personal_agent.engine.emitter import RunEmitter
from personal_agent.errors import NotFound
from personal_agent.governance.budgets import BudgetExceeded, reserve_request
from personal_agent.governance.tiers import ClassificationBlocked
from personal_agent.runs import store
from personal_agent.runs.spec import RunSpec

StepStatus = Literal["continue", "waiting", "succeeded", "failed", "cancelled"]
MODEL_ERRORS = (ModelHTTPError, UnexpectedModelBehavior, UsageLimitExceeded, AgentRunError)


@dataclass(frozen=True)
class StepOutcome:
    """What a step did: small enough for a Step Functions payload (no content)."""

    status: StepStatus
    seq: int
    request_index: int
    approval_ids: list[str] = field(default_factory=list)


class RunLimitExceeded(Exception):
    """The run reached a hard limit of its spec."""


def dump_messages(messages: list[ModelMessage]) -> bytes:
    return ModelMessagesTypeAdapter.dump_json(messages)


def _ids(spec: RunSpec) -> dict[str, str]:
    return {"thread_id": str(spec.chat_id), "run_id": str(spec.run_id)}


async def _start(spec: RunSpec, emitter: RunEmitter) -> store.Checkpoint:
    """First step: the chat history plus this run's user message become checkpoint 0."""
    async with org_transaction(spec.org_id) as conn:
        existing = await store.latest_checkpoint(conn, spec.run_id)
        if existing is not None:
            return existing
        prior = await store.chat_history(conn, spec.chat_id, before_run=spec.run_id) if spec.history == "chat" else []
        cur = await conn.execute("SELECT message FROM messages WHERE run_id = %s ORDER BY id", [spec.run_id])
        own = [row["message"] for row in await cur.fetchall()]
        messages = prior + own
    routing = await _route(spec, own)
    async with org_transaction(spec.org_id) as conn:
        state = {"history_len": len(messages), "request_index": 0, "routing": routing}
        await store.set_routing(conn, spec.run_id, routing)
        await emitter.emit(RunStartedEvent(**_ids(spec)))
        await store.save_checkpoint(conn, spec, 0, "start", store.dumps(messages).encode(), state)
        await store.mark_running(conn, spec.run_id)
    observability.record_run_started(spec.mode)
    await emitter.announce(
        "run_started",
        {
            "run_id": str(spec.run_id),
            "chat_id": str(spec.chat_id),
            "status": "running",
            "source": spec.trigger_source,
            "mode": spec.mode,
        },
    )
    return store.Checkpoint(0, "start", messages, state)


async def _route(spec: RunSpec, own: list[Any]) -> dict[str, Any] | None:
    """Classify the request with the cheap router; its response goes in the ledger as request -1."""
    from personal_agent.governance.routing import classify_request

    text = " ".join(
        str(p.get("content", "")) for m in own for p in m.get("parts", []) if p.get("part_kind") == "user-prompt"
    )
    decision, response = await classify_request(spec, text)
    if response is not None:
        async with org_transaction(spec.org_id) as conn:
            await usage.record(conn, spec, -1, response)
    return decision.model_dump() if decision is not None else None


async def advance(run_id: UUID, org_id: UUID, *, time_budget: float | None = None) -> StepOutcome:
    """Advance the run from its last checkpoint until it ends, waits for a person, or the budget is spent."""
    async with org_transaction(org_id) as conn:
        row = await store.get_run(conn, run_id)
    if row is None:
        raise NotFound("run not found", code="run_not_found")
    spec = RunSpec.model_validate(row["spec"])
    if row["status"] in store.TERMINAL:
        return StepOutcome(row["status"], -1, -1)
    emitter = RunEmitter(spec)
    checkpoint = await _start(spec, emitter)
    return await _drive(spec, emitter, checkpoint, time_budget)


async def _drive(spec: RunSpec, emitter: RunEmitter, cp: store.Checkpoint, time_budget: float | None) -> StepOutcome:
    seq, ri = cp.seq, int(cp.state["request_index"])
    history_len = int(cp.state["history_len"])
    state = dict(cp.state)
    history = ModelMessagesTypeAdapter.validate_python(cp.messages)
    deadline = time.monotonic() + time_budget if time_budget else None
    watch = CancelWatch(spec.run_id, spec.org_id)
    translator = AgUiTranslator(str(spec.run_id), ri)
    completed: list[ModelMessage] = list(history)
    last = history[-1] if history else None
    if cp.kind == "model_response" and isinstance(last, ModelResponse) and not last.tool_calls:
        # The final answer is stored (a retried Task after it): finish without asking the model again.
        return await _end(spec, emitter, history, history_len, "succeeded", seq, ri)
    progressed = False  # hand back only after a resumable checkpoint, so every Task moves the run forward
    deferred = None
    if cp.kind == "awaiting_approval":
        deferred = await _approval_results(spec, cp.seq)
        if deferred is None:
            return StepOutcome("waiting", seq, ri)
    try:
        agent = await build_agent(spec, state.get("routing"))  # the classification gate runs here, every step
        async with agent.iter(
            None, message_history=history, deferred_tool_results=deferred, usage_limits=UsageLimits(request_limit=None)
        ) as run:
            node = run.next_node
            while not Agent.is_end_node(node):
                await watch.check(force=True)
                if Agent.is_model_request_node(node):
                    await reserve_request(spec, ri, [*run.all_messages(), node.request])
                    if ri >= spec.limits.max_model_requests:
                        raise RunLimitExceeded(
                            f"the run reached its limit of {spec.limits.max_model_requests} model requests"
                        )
                    translator = AgUiTranslator(str(spec.run_id), ri)
                    step = f"model_request:{ri}"
                    await emitter.emit(StepStartedEvent(step_name=step))
                    async with node.stream(run.ctx) as stream:
                        async for event in stream:
                            await emitter.emit(*translator.translate(event))
                            await watch.check()
                    node = await run.next(node)
                    completed = run.all_messages()
                    response = completed[-1]
                    assert isinstance(response, ModelResponse)
                    seq, ri = seq + 1, ri + 1
                    state.update(request_index=ri, last_event_id=emitter.last_id)
                    async with org_transaction(spec.org_id) as conn:  # alone: the ledger row outlives a deleted run
                        recorded = await usage.record(conn, spec, ri - 1, response)
                    if recorded:
                        cost, _ = usage.price(response, spec)
                        observability.record_usage(
                            response.usage.input_tokens,
                            response.usage.output_tokens,
                            float(cost) if cost is not None else None,
                        )
                    async with org_transaction(spec.org_id) as conn:
                        await store.set_answered_model(conn, spec.run_id, response.model_name)
                        await store.save_checkpoint(conn, spec, seq, "model_response", dump_messages(completed), state)
                    # A resumable hand-back point: tool calls to run next. A final answer ends in this Task.
                    progressed = bool(response.tool_calls)
                    await emitter.emit(StepFinishedEvent(step_name=step))
                elif Agent.is_call_tools_node(node):
                    calls = node.model_response.tool_calls
                    step = f"tools:{ri - 1}"
                    if calls:
                        await emitter.emit(StepStartedEvent(step_name=step))
                    async with node.stream(run.ctx) as tool_stream:
                        async for event in tool_stream:
                            await emitter.emit(*translator.translate(event))
                    node = await run.next(node)
                    if calls and Agent.is_model_request_node(node):
                        completed = [*run.all_messages(), node.request]
                        seq += 1
                        state.update(last_event_id=emitter.last_id)
                        async with org_transaction(spec.org_id) as conn:
                            await store.save_checkpoint(
                                conn, spec, seq, "tool_results", dump_messages(completed), state
                            )
                        progressed = True
                    if calls:
                        await emitter.emit(StepFinishedEvent(step_name=step))
                else:
                    node = await run.next(node)
                if progressed and deadline is not None and time.monotonic() > deadline and not Agent.is_end_node(node):
                    return StepOutcome("continue", seq, ri)
            output = node.data.output
            completed = run.all_messages()
    except RunCancelled:
        partial = translator.partial_text()
        await emitter.emit(*translator.close_open())
        if partial and not (completed and isinstance(completed[-1], ModelResponse)):
            completed = [*completed, ModelResponse(parts=[TextPart(partial)], model_name=spec.model)]
        return await _end(spec, emitter, completed, history_len, "cancelled", seq, ri)
    except (*MODEL_ERRORS, RunLimitExceeded, BudgetExceeded, ClassificationBlocked) as exc:
        await emitter.emit(*translator.close_open())
        code = "limit_exceeded" if isinstance(exc, RunLimitExceeded | UsageLimitExceeded) else "model_error"
        if isinstance(exc, BudgetExceeded | ClassificationBlocked):
            code = exc.code
        return await _end(
            spec, emitter, completed, history_len, "failed", seq, ri, error={"code": code, "message": str(exc)[:500]}
        )
    if isinstance(output, DeferredToolRequests):
        from personal_agent.durable.approvals import request_approvals

        seq += 1
        state.update(last_event_id=emitter.last_id)
        approval_ids = await request_approvals(spec, emitter, output, seq, dump_messages(completed), state)
        if spec.approval_policy == "deny":
            # Nobody is asked: the policy decides at once and the run goes on with the denial.
            from personal_agent.durable.approvals import deny_by_policy

            await deny_by_policy(spec.org_id, spec.run_id)
            async with org_transaction(spec.org_id) as conn:
                waiting = await store.latest_checkpoint(conn, spec.run_id)
            assert waiting is not None
            return await _drive(spec, emitter, waiting, time_budget)
        return StepOutcome("waiting", seq, ri, approval_ids)
    return await _end(spec, emitter, completed, history_len, "succeeded", seq, ri)


async def _approval_results(spec: RunSpec, seq: int) -> DeferredToolResults | None:
    """The decisions for the approvals of checkpoint `seq`, or None while any is still pending."""
    from personal_agent.durable.approvals import decisions_for

    async with org_transaction(spec.org_id) as conn:
        rows = await decisions_for(conn, spec.run_id, seq)
        if not rows or any(r["status"] == "pending" for r in rows):
            return None
        await store.mark_running(conn, spec.run_id)
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
    for row in rows:
        if row["status"] == "approved":
            approvals[row["tool_call_id"]] = (
                ToolApproved(override_args=row["edited_args"]) if row["edited_args"] else True
            )
        else:
            why = row["reason"] or ("denied by a person" if row["status"] == "denied" else "the approval expired")
            approvals[row["tool_call_id"]] = ToolDenied(f"The tool call was not approved: {why}.")
    return DeferredToolResults(approvals=approvals)


async def _end(
    spec: RunSpec,
    emitter: RunEmitter,
    messages: list[ModelMessage],
    history_len: int,
    status: str,
    seq: int,
    ri: int,
    error: dict[str, Any] | None = None,
) -> StepOutcome:
    """Write the run's messages to the chat once, then emit its terminal event and tell the feed."""
    new = ModelMessagesTypeAdapter.dump_python(messages[history_len:], mode="json")
    async with org_transaction(spec.org_id) as conn:
        if await store.finish_run(conn, spec.run_id, status, error):
            await store.append_messages(conn, spec, new)
    clear_local_cancel(spec.run_id)
    if status == "failed" and error:
        observability.record_run_failed(error["code"])
    elif status == "succeeded":
        observability.record_run_finished()
    if status == "failed" and error:
        await emitter.emit(RunErrorEvent(message=error["message"], code=error["code"]))
    elif status == "cancelled":
        await emitter.emit(
            CustomEvent(name="run_cancelled", value={"run_id": str(spec.run_id)}),
            RunFinishedEvent(**_ids(spec), outcome=RunFinishedCancelledOutcome()),
        )
    else:
        await emitter.emit(RunFinishedEvent(**_ids(spec), outcome=RunFinishedSuccessOutcome()))
    await emitter.announce(
        "run_finished",
        {
            "run_id": str(spec.run_id),
            "chat_id": str(spec.chat_id),
            "status": status,
            "source": spec.trigger_source,
            "mode": spec.mode,
        },
    )
    return StepOutcome(status, seq, ri)  # type: ignore[arg-type]


async def end_idle_run(run_id: UUID, org_id: UUID, status: str, error: dict[str, Any] | None = None) -> bool:
    """End a run that no engine is advancing (waiting for a person, or its driver is gone)."""
    async with org_transaction(org_id) as conn:
        row = await store.get_run(conn, run_id)
        cp = await store.latest_checkpoint(conn, run_id)
    if row is None or row["status"] in store.TERMINAL:
        return False
    spec = RunSpec.model_validate(row["spec"])
    messages = ModelMessagesTypeAdapter.validate_python(cp.messages) if cp else []
    history_len = int(cp.state["history_len"]) if cp else 0
    await _end(spec, RunEmitter(spec), messages, history_len, status, cp.seq if cp else 0, 0, error=error)
    return True


async def fail_run(run_id: UUID, org_id: UUID, code: str, message: str) -> None:
    """Mark a run failed from outside the engine (a driver that crashed, the state machine's Catch)."""
    await end_idle_run(run_id, org_id, "failed", {"code": code, "message": message[:500]})
