"""The engine: advance a run by steps over pydantic-ai, checkpointing after every model response and every tool
round, emitting AG-UI events, and recording usage per ModelResponse.

Both drivers call `advance`: inline loops it once with no time budget; a durable Task calls it with its budget
and gets back a small outcome for the state machine's Choice. The steps themselves are in `engine/drive.py`,
approvals in `engine/deferred.py`, the end of a run in `engine/finish.py`.
"""

from __future__ import annotations

from typing import Any, cast
from uuid import UUID

from ag_ui.core import CustomEvent, RunStartedEvent
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits

from personal_agent import observability
from personal_agent.chats import message_store
from personal_agent.db import org_transaction
from personal_agent.db.retry import retrying
from personal_agent.engine import usage
from personal_agent.engine.agent_factory import build_agent
from personal_agent.engine.cancellation import RunCancelled, stopped_while_waiting
from personal_agent.engine.deferred import approval_results, deny_by_policy, pause_for_approval, questions_of
from personal_agent.engine.delegation import children_results, delegations, round_children, start_children
from personal_agent.engine.drive import Drive, StepOutcome, StepStatus, dump_messages
from personal_agent.engine.emitter import RunEmitter
from personal_agent.engine.failures import RUN_FAILURES, run_error
from personal_agent.engine.finish import end_run, run_ids
from personal_agent.errors import NotFound
from personal_agent.governance.budgets import BudgetExceeded, reserve_request
from personal_agent.governance.routing import classify_request
from personal_agent.mcp_servers.toolsets import unavailable
from personal_agent.runs import store
from personal_agent.spec.labels import step_spec
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec


async def advance(
    run_id: UUID, org_id: UUID, *, time_budget: float | None = None, row: store.RunRow | None = None
) -> StepOutcome:
    """Advance the run from its last checkpoint until it ends, waits for a person, or the budget is spent. `row`:
    the run's row as just read under its lease (otherwise it is read here)."""
    if row is None:
        async with org_transaction(org_id) as conn:
            row = await store.get_run(conn, run_id)
    if row is None:
        raise NotFound("run not found", code="run_not_found")
    spec = RunSpec.model_validate(row.spec)
    if row.status in store.TERMINAL:
        return StepOutcome(cast(StepStatus, row.status), -1, -1)  # it ended: the drive reports how
    emitter = RunEmitter(spec)
    if row.status == "queued":  # its first step: clients hear of it before the history is read
        await emitter.emit(RunStartedEvent(**run_ids(spec)))
    checkpoint, cancel_flag = await _start(spec, emitter)
    return await _drive(spec, emitter, checkpoint, time_budget, cancel_flag)


async def _start(spec: RunSpec, emitter: RunEmitter) -> tuple[store.Checkpoint, bool | None]:
    """First step: the chat history plus this run's user message become checkpoint 0, in the transaction that read
    them; with a router model to ask, its call comes between the reads and a transaction of their own for the
    writes (no transaction stays open across a model call). Also the cancel flag, when that transaction read it."""
    async with org_transaction(spec.org_id) as conn:
        existing = await store.latest_checkpoint(conn, spec.run_id)
        if existing is not None:
            return existing, None
        upto = await _branch_tip(conn, spec) if spec.history == "chat" else None
        prior = await message_store.branch_messages(conn, spec.chat_id, upto)
        own = (
            [_task_request(spec.delegation.task)]
            if spec.delegation
            else await message_store.run_messages(conn, spec.run_id)
        )
        messages = prior + own
        if spec.router_model is None:  # unclassified: nothing to ask
            state, cancel_flag = await _first_checkpoint(conn, spec, emitter, messages, upto, len(prior), None)
    if spec.router_model is not None:
        routing = await _route(spec, own or prior[-1:])  # a regenerate's request is the user turn it answers again
        async with org_transaction(spec.org_id) as conn:
            state, cancel_flag = await _first_checkpoint(conn, spec, emitter, messages, upto, len(prior), routing)
    observability.record_run_started(spec.mode)
    first = store.Checkpoint(0, "start", messages, state)
    if spec.parent_run_id is not None:  # a sub-agent shows on its parent's stream, not as a run of the chat
        return first, cancel_flag
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
    return first, cancel_flag


async def _first_checkpoint(
    conn: Any,
    spec: RunSpec,
    emitter: RunEmitter,
    messages: list[Any],
    upto: int | None,
    prior_len: int,
    routing: dict[str, Any] | None,
) -> tuple[dict[str, Any], bool | None]:
    """Store the routing and checkpoint 0 and mark the run running; its state and its cancel flag."""
    state: dict[str, Any] = {"history_len": len(messages), "request_index": 0, "routing": routing}
    if upto is not None:  # checkpoints store the run's own messages; the chat's earlier ones stay in the chat
        state["chat_prefix"] = store.chat_prefix(spec.chat_id, upto, prior_len)
    await store.set_routing(conn, spec.run_id, routing, attempted=spec.router_model is not None)
    if spec.gated_tools:  # the tier gate kept these from the run at launch: say so before anything else
        gated = [t.model_dump() for t in spec.gated_tools]
        await emitter.emit(CustomEvent(name="tool_gated", value={"tools": gated}))
    await store.save_checkpoint(conn, spec, 0, "start", store.dumps(messages).encode(), state)
    return state, await store.mark_running(conn, spec.run_id)


async def _branch_tip(conn: Any, spec: RunSpec) -> int | None:
    """The last chat message before the run: the run sees the branch from the chat's first turn down to it."""
    if spec.parent_message_id is not None or spec.regenerate:
        return spec.parent_message_id
    return await message_store.run_parent(conn, spec.run_id)  # a run launched before branches (0021)


def _task_request(task: str) -> Any:
    """A sub-agent's only user message: its task (it is not stored in the chat)."""
    return ModelMessagesTypeAdapter.dump_python([ModelRequest.user_text_prompt(task)], mode="json")[0]


async def _route(spec: RunSpec, own: list[Any]) -> dict[str, Any] | None:
    """Classify the request with the cheap router; its response goes in the ledger as request -1."""
    text = " ".join(
        str(p.get("content", "")) for m in own for p in m.get("parts", []) if p.get("part_kind") == "user-prompt"
    )
    if spec.router_model is not None:
        try:  # the router's request counts against the budget like any other
            await reserve_request(spec, -1, [ModelRequest.user_text_prompt(text[:4000])], (spec.router_model,))
        except BudgetExceeded:
            return None  # unclassified: acting tools need approval, and the run's first request is refused
    decision, response = await classify_request(spec, text)
    if response is not None:

        async def ledger() -> None:
            async with org_transaction(spec.org_id) as conn:
                await usage.record(conn, spec, -1, response)

        await retrying(ledger, what="a usage record")  # idempotent: UNIQUE(run_id, request_index)
    return decision.model_dump() if decision is not None else None


async def _drive(
    spec: RunSpec,
    emitter: RunEmitter,
    cp: store.Checkpoint,
    time_budget: float | None,
    cancel_flag: bool | None = None,
) -> StepOutcome:
    """Continue from checkpoint `cp`: walk the graph, then end the run, pause it for approvals, or hand back.
    `cancel_flag`: the run's flag as Postgres gave it a moment ago (None: not read)."""
    history = ModelMessagesTypeAdapter.validate_python(cp.messages)
    drive = Drive.from_checkpoint(spec, emitter, cp, history, time_budget)
    drive.watch.read_from_db(cancel_flag)
    last = history[-1] if history else None
    if cp.kind == "model_response" and isinstance(last, ModelResponse) and not last.tool_calls:
        # The final answer is stored (a retried Task after it): finish without asking the model again.
        return await _end(drive, "succeeded")
    deferred = None
    if cp.kind == "awaiting_approval":
        deferred = await approval_results(spec, cp.seq, emitter)
        if deferred is None:
            return drive.outcome("waiting")
    elif cp.kind == "awaiting_children":
        try:
            deferred = await children_results(spec, cp)
        except BudgetExceeded as exc:
            return await _end(drive, "failed", run_error(exc, spec))
        if deferred is None:
            return drive.outcome("delegating", children=round_children(spec, history, cp.state["children"]))
    try:
        finished, output = await _walk(drive, history, deferred)
    except RunCancelled:
        return await _cancelled(drive)
    except RUN_FAILURES as exc:
        await emitter.emit(*drive.translator.close_open())
        return await _end(drive, "failed", run_error(exc, spec))
    if not finished:
        return drive.outcome("continue")
    if isinstance(output, DeferredToolRequests):
        if delegations(output):
            return await start_children(drive, output)
        if output.calls and not output.approvals and not questions_of(output):  # the caller's own tools (`/v1`)
            return await _end(drive, "succeeded")
        return await _pause(drive, output, time_budget)
    return await _end(drive, "succeeded")


async def _walk(drive: Drive, history: list[ModelMessage], deferred: DeferredToolResults | None) -> tuple[bool, Any]:
    """Walk pydantic-ai's graph node by node: (True, the run's output), or (False, None) when the time budget
    handed the run back first. The cancel flag is checked before every model request and tool round."""
    spec = step_spec(drive.spec, history)  # its tier raised to what entered the run so far
    routing = drive.state.get("routing")
    agent = await build_agent(spec, drive.emitter)  # the classification gate runs here, every step
    async with agent.iter(
        None,
        message_history=history,
        deferred_tool_results=deferred,
        model_settings=cast(ModelSettings, spec.model_settings.as_dict()) or None,
        usage_limits=UsageLimits(request_limit=None),
        deps=RunDeps.for_run(spec, routing),
    ) as run:
        await _report_unavailable(drive, agent)
        node = run.next_node
        while not Agent.is_end_node(node):
            if Agent.is_model_request_node(node):
                await drive.watch.check(force=True)
                node = await drive.model_step(run, node)
            elif Agent.is_call_tools_node(node):
                await drive.watch.check(force=True)
                node = await drive.tool_step(run, node)
            else:  # the user prompt: builds the first request and sends nothing (the request's check follows)
                node = await run.next(node)
            if drive.should_hand_back(node):
                return False, None
        drive.completed = run.all_messages()
        return True, node.data.output


async def _report_unavailable(drive: Drive, agent: Agent[RunDeps, Any]) -> None:
    """Say once per run (a CUSTOM `tools_unavailable` event) which MCP servers this step could not reach; the
    run goes on without their tools."""
    reported = set(drive.state.get("mcp_unavailable", []))
    down = [d for d in unavailable(list(agent.toolsets)) if d["server"] not in reported]
    if down:
        drive.state["mcp_unavailable"] = sorted(reported | {d["server"] for d in down})
        await drive.emitter.emit(CustomEvent(name="tools_unavailable", value={"servers": down}))


async def _pause(drive: Drive, requests: DeferredToolRequests, time_budget: float | None) -> StepOutcome:
    """Store the approvals the run waits for; under a `deny` policy nobody is asked and the run goes on."""
    spec = drive.spec
    drive.seq += 1
    drive.state.update(last_event_id=drive.emitter.last_id)
    messages = dump_messages(drive.completed)
    approval_ids = await pause_for_approval(spec, drive.emitter, requests, drive.seq, messages, drive.state)
    if spec.approval_policy != "deny":
        if await stopped_while_waiting(spec.run_id, spec.org_id):
            return await _cancelled(drive, once=True)  # the cancel may have found it waiting too: one end
        return drive.outcome("waiting", approval_ids)
    await deny_by_policy(spec.org_id, spec.run_id)
    async with org_transaction(spec.org_id) as conn:
        waiting = await store.latest_checkpoint(conn, spec.run_id)
    assert waiting is not None
    return await _drive(spec, drive.emitter, waiting, time_budget)


async def _cancelled(drive: Drive, *, once: bool = False) -> StepOutcome:
    """End a run its owner stopped, keeping the text streamed so far as the last response."""
    partial = drive.translator.partial_text()
    await drive.emitter.emit(*drive.translator.close_open())
    completed = drive.completed
    if partial and not (completed and isinstance(completed[-1], ModelResponse)):
        drive.completed = [*completed, ModelResponse(parts=[TextPart(partial)], model_name=drive.spec.model)]
    return await _end(drive, "cancelled", once=once)


async def _end(
    drive: Drive, status: StepStatus, error: dict[str, Any] | None = None, *, once: bool = False
) -> StepOutcome:
    return await end_run(
        drive.spec, drive.emitter, drive.completed, drive.history_len, status, drive.seq, drive.ri, error, once=once
    )


async def end_idle_run(
    run_id: UUID, org_id: UUID, status: StepStatus, error: dict[str, Any] | None = None, *, once: bool = False
) -> bool:
    """End a run that no engine is advancing (waiting for a person, or its driver is gone); `once`: see `end_run`."""
    async with org_transaction(org_id) as conn:
        row = await store.get_run(conn, run_id)
        cp = await store.latest_checkpoint(conn, run_id)
    if row is None or row.status in store.TERMINAL:
        return False
    spec = RunSpec.model_validate(row.spec)
    messages = ModelMessagesTypeAdapter.validate_python(cp.messages) if cp else []
    history_len = int(cp.state["history_len"]) if cp else 0
    await end_run(spec, RunEmitter(spec), messages, history_len, status, cp.seq if cp else 0, 0, error=error, once=once)
    return True


async def fail_run(run_id: UUID, org_id: UUID, code: str, message: str) -> None:
    """Mark a run failed from outside the engine (a driver that crashed, the state machine's Catch)."""
    await end_idle_run(run_id, org_id, "failed", {"code": code, "message": message[:500]})
