"""One advance of a run through pydantic-ai's graph, node by node: a model step (budget reservation, request
limit, streamed AG-UI events, usage, checkpoint), a tool step (tool-call limit, results, checkpoint), and the
counters that go into every checkpoint and into the small outcome a durable Task returns."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from ag_ui.core import StepFinishedEvent, StepStartedEvent
from pydantic_ai import Agent, AgentRun, CallToolsNode, ModelRequestNode
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse

from personal_agent import observability, otel_export
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.db.retry import retrying
from personal_agent.engine import subagent_events, usage
from personal_agent.engine.agui import AgUiTranslator
from personal_agent.engine.cancellation import CancelWatch
from personal_agent.engine.emitter import RunEmitter
from personal_agent.engine.failures import RunLimitExceeded
from personal_agent.fastpaths.direct_model_events import request_events
from personal_agent.governance.budgets import reserve_request
from personal_agent.runs import store
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec

YIELD_SECONDS = 0.001
"""A drive lets the other tasks of its process run at least this often while it turns a model's stream into events:
the relay of its own events is one of them (`pa dev`, a streamed turn's Lambda). A burst of chunks the provider sent
at once is otherwise translated in one go, and the first token reaches the client after all of them (11 ms later
for 20 chunks here, `bench/first_token.py`)."""

StepStatus = Literal["continue", "waiting", "delegating", "succeeded", "failed", "cancelled"]
Run = AgentRun[RunDeps, Any]
Node = Any  # pydantic-ai's `AgentNode | End` (its node union is not public)


@dataclass(frozen=True)
class StepOutcome:
    """What a step did: small enough for a Step Functions payload (no content)."""

    status: StepStatus
    seq: int
    request_index: int
    approval_ids: list[str] = field(default_factory=list)
    children: tuple[RunSpec, ...] = ()
    """`delegating`: the child runs the run waits for; the driver stores those not stored yet (through the launch
    chokepoint) and runs them. In process only: a durable Task returns the pointer fields, never these specs."""

    @property
    def child_ids(self) -> list[str]:
        return [str(child.run_id) for child in self.children]


def dump_messages(messages: list[ModelMessage]) -> bytes:
    return ModelMessagesTypeAdapter.dump_json(messages)


def tool_calls_made(messages: list[ModelMessage]) -> int:
    """How many tool calls the model asked for in these messages."""
    return sum(len(m.tool_calls) for m in messages if isinstance(m, ModelResponse))


@dataclass
class Drive:
    """The state of one advance: checkpoint counters (`seq`, model request index `ri`), the messages so far, and
    the time budget. `progressed` is set at a resumable checkpoint, so every durable Task moves the run on."""

    spec: RunSpec
    emitter: RunEmitter
    seq: int
    ri: int
    history_len: int
    state: dict[str, Any]
    completed: list[ModelMessage]
    deadline: float | None
    watch: CancelWatch
    translator: AgUiTranslator
    progressed: bool = False
    answered: str | None = None
    """The `answered_model` this advance last stored on the run (a repeat is not written again)."""
    yielded: float = 0.0

    @classmethod
    def from_checkpoint(
        cls, spec: RunSpec, emitter: RunEmitter, cp: store.Checkpoint, history: list[ModelMessage], budget: float | None
    ) -> Drive:
        ri = int(cp.state["request_index"])
        return cls(
            spec=spec,
            emitter=emitter,
            seq=cp.seq,
            ri=ri,
            history_len=int(cp.state["history_len"]),
            state=dict(cp.state),
            completed=list(history),
            deadline=time.monotonic() + budget if budget else None,
            watch=CancelWatch(spec.run_id, spec.org_id),
            translator=AgUiTranslator(str(spec.run_id), ri),
        )

    def outcome(
        self, status: StepStatus, approval_ids: list[str] | None = None, children: tuple[RunSpec, ...] = ()
    ) -> StepOutcome:
        return StepOutcome(status, self.seq, self.ri, approval_ids or [], children)

    def should_hand_back(self, node: Any) -> bool:
        """The time budget is spent after a resumable checkpoint, and the run has not ended."""
        return (
            self.progressed
            and self.deadline is not None
            and time.monotonic() > self.deadline
            and not Agent.is_end_node(node)
        )

    async def model_step(self, run: Run, node: ModelRequestNode[RunDeps, Any]) -> Node:
        """Reserve the request's budget, send it (streaming its AG-UI events), record and checkpoint the response."""
        await reserve_request(self.spec, self.ri, [*run.all_messages(), node.request])
        limit = self.spec.limits.max_model_requests
        if self.ri >= limit:
            raise RunLimitExceeded(f"the run reached its limit of {limit} model requests")
        self.translator = AgUiTranslator(str(self.spec.run_id), self.ri)
        step = f"model_request:{self.ri}"
        await self.emitter.emit(StepStartedEvent(step_name=step))
        async with node.stream(run.ctx) as stream:
            for events in request_events(stream):
                async for event in events:
                    await self.emitter.emit(*self.translator.translate(event))
                    await self.watch.check()
                    if (now := time.monotonic()) - self.yielded >= YIELD_SECONDS:
                        self.yielded = now
                        await asyncio.sleep(0)
        following = await run.next(node)
        self.completed = run.all_messages()
        response = self.completed[-1]
        assert isinstance(response, ModelResponse)
        await self._record_response(response)
        await subagent_events.progress(self.spec, self.ri - 1, [call.tool_name for call in response.tool_calls])
        # A resumable hand-back point: tool calls to run next. A final answer ends in this Task.
        self.progressed = bool(response.tool_calls)
        await self.emitter.emit(StepFinishedEvent(step_name=step))
        return following

    async def _record_response(self, response: ModelResponse) -> None:
        self.seq, self.ri = self.seq + 1, self.ri + 1
        self.state.update(request_index=self.ri, last_event_id=self.emitter.last_id)

        async def ledger() -> bool:
            async with org_transaction(self.spec.org_id) as conn:  # alone: the ledger row outlives a deleted run
                return await usage.record(conn, self.spec, self.ri - 1, response)

        recorded = await retrying(ledger, what="a usage record")  # idempotent: UNIQUE(run_id, request_index)
        if recorded:
            cost, _ = usage.price(response, self.spec)
            observability.record_usage(
                response.usage.input_tokens, response.usage.output_tokens, float(cost) if cost is not None else None
            )
            if otel_export.enabled():
                otel_export.event("pa.model_response", self._trace_figures(response, cost))

        model_name = response.model_name

        async def save() -> None:
            async with org_transaction(self.spec.org_id) as conn:
                if model_name != self.answered or model_name is None:  # the same answer's model: stored already
                    await store.set_answered_model(conn, self.spec.run_id, model_name)
                await self._save(conn, "model_response")

        await retrying(save, what="a checkpoint")
        self.answered = model_name

    def _trace_figures(self, response: ModelResponse, cost: Any) -> dict[str, Any]:
        """The response's ledger figures for its trace: ids, model, tokens, price (never content)."""
        return {
            "pa.run_id": str(self.spec.run_id),
            "pa.request_index": self.ri - 1,
            "gen_ai.response.model": response.model_name or "",
            "gen_ai.usage.input_tokens": response.usage.input_tokens,
            "gen_ai.usage.output_tokens": response.usage.output_tokens,
            "pa.cost_usd": float(cost) if cost is not None else -1.0,
        }

    async def tool_step(self, run: Run, node: CallToolsNode[RunDeps, Any]) -> Node:
        """Run the response's tool calls (within the run's tool-call limit), streaming their results; checkpoint
        the results before the next model request."""
        calls = node.model_response.tool_calls
        step = f"tools:{self.ri - 1}"
        if calls:
            self._check_tool_call_limit()
            await self.emitter.emit(StepStartedEvent(step_name=step))
        async with node.stream(run.ctx) as tool_stream:
            async for event in tool_stream:
                await self.emitter.emit(*self.translator.translate(event))
        following = await run.next(node)
        if calls and Agent.is_model_request_node(following):
            self.completed = [*run.all_messages(), following.request]
            self.seq += 1
            await self.checkpoint("tool_results")
            self.progressed = True
        if calls:
            await self.emitter.emit(StepFinishedEvent(step_name=step))
        return following

    def _check_tool_call_limit(self) -> None:
        limit = self.spec.limits.max_tool_calls
        if tool_calls_made(self.completed[self.history_len :]) > limit:
            raise RunLimitExceeded(f"the run reached its limit of {limit} tool calls")

    async def checkpoint(self, kind: str) -> None:
        """Store the messages so far as checkpoint `seq` (with the stream position a resumed run continues at)."""
        self.state.update(last_event_id=self.emitter.last_id)

        async def save() -> None:
            async with org_transaction(self.spec.org_id) as conn:
                await self._save(conn, kind)

        await retrying(save, what="a checkpoint")  # a checkpoint is written once: a replay writes nothing

    async def _save(self, conn: Conn, kind: str) -> None:
        await store.save_checkpoint(conn, self.spec, self.seq, kind, dump_messages(self.completed), self.state)
