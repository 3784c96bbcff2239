"""`fastpaths.direct_model_events.request_events`: a model request's events read straight from the model's stream are
the events, and the messages, that pydantic-ai's `AgentStream` gives; any run whose capabilities watch, wrap or
can cut short the stream, or that limits tokens, is read through the `AgentStream`."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import AgentStreamEvent, ModelMessage, ModelMessagesTypeAdapter, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.usage import UsageLimits

from personal_agent.attachments.model_content import AttachmentContent
from personal_agent.engine.context_fit import ContextFit
from personal_agent.fastpaths.direct_model_events import request_events


async def _reply(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """Text, then a tool call on the first request; thinking-free text with tricky chunks on the second."""
    if not any(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, "parts", [])):
        yield "Looking "
        yield "it up."
        yield {0: DeltaToolCall(name="lookup", json_args='{"q": ', tool_call_id="c1")}
        yield {0: DeltaToolCall(json_args='"x"}')}
        return
    for chunk in ("It ", "is ", "", "é “42” 😀", "."):
        yield chunk


def _agent(**kwargs: Any) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(stream_function=_reply), **kwargs)

    @agent.tool_plain
    def lookup(q: str) -> str:
        return f"found {q}"

    return agent


async def _drive(
    agent: Agent[None, str], direct: bool, **run_kwargs: Any
) -> tuple[list[str], list[ModelMessage], list[int]]:
    """Every event of every model request (each as its repr), the run's messages, and how many iterables each
    request was read from."""
    seen: list[str] = []
    readers: list[int] = []
    async with agent.iter("question", **run_kwargs) as run:
        node = run.next_node
        while not Agent.is_end_node(node):
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:  # type: ignore[var-annotated]
                    iterables: tuple[AsyncIterable[AgentStreamEvent], ...] = (
                        request_events(stream) if direct else (stream,)
                    )
                    readers.append(len(iterables))
                    for events in iterables:
                        async for event in events:
                            seen.append(repr(event))
            node = await run.next(node)
        return seen, run.all_messages(), readers


_PER_RUN = {"timestamp", "run_id", "conversation_id"}


def _without_times(messages: list[ModelMessage]) -> Any:
    """The messages as JSON, without what differs between any two runs (times and run ids)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _PER_RUN}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))


async def test_direct_reading_gives_the_agent_streams_events_and_messages() -> None:
    slow_events, slow_messages, slow_readers = await _drive(_agent(), direct=False)
    fast_events, fast_messages, fast_readers = await _drive(_agent(), direct=True)
    assert fast_readers == [2, 2] and slow_readers == [1, 1]
    assert [e.split("(")[0] for e in fast_events] == [e.split("(")[0] for e in slow_events]
    assert [e.split("timestamp=")[0] for e in fast_events] == [e.split("timestamp=")[0] for e in slow_events]
    assert any("FinalResultEvent" in e for e in fast_events)
    assert _without_times(fast_messages) == _without_times(slow_messages)
    assert fast_messages[-1].parts[-1].content == "It is é “42” 😀."  # type: ignore[union-attr]


class _Watcher(AbstractCapability[None]):
    """A capability that sees every event of the run (`on_event`)."""

    def __init__(self) -> None:
        self.events = 0

    async def on_event(self, ctx: RunContext[None], *, event: AgentStreamEvent) -> None:
        self.events += 1


class _Rewriter(AbstractCapability[None]):
    """A capability that wraps the run's event stream."""

    async def wrap_run_event_stream(
        self, ctx: RunContext[None], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        async for event in stream:
            yield event


async def test_a_capability_that_watches_or_wraps_the_stream_keeps_the_agent_stream() -> None:
    watcher = _Watcher()
    events, _, readers = await _drive(_agent(capabilities=[watcher]), direct=True)
    assert readers == [1, 1]
    assert watcher.events >= len(events)
    _, _, readers = await _drive(_agent(capabilities=[_Rewriter()]), direct=True)
    assert readers == [1, 1]


async def test_a_token_limit_keeps_the_agent_stream() -> None:
    _, _, readers = await _drive(_agent(), direct=True, usage_limits=UsageLimits(output_tokens_limit=10_000))
    assert readers == [1, 1]
    _, _, readers = await _drive(_agent(), direct=True, usage_limits=UsageLimits(request_limit=None))
    assert readers == [2, 2]


def test_the_engines_own_capabilities_leave_the_stream_alone() -> None:
    for capability in (ContextFit, AttachmentContent):
        assert capability.wrap_run_event_stream is AbstractCapability.wrap_run_event_stream, capability
        assert capability.wrap_model_request is AbstractCapability.wrap_model_request, capability
        assert capability.on_event is AbstractCapability.on_event, capability
