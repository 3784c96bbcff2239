"""Scripted models for tests: pydantic-ai `FunctionModel`s registered under a unique model id."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model

Script = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[Any]]


@dataclass
class Recorder:
    """Counts the model's requests, keyed by how many messages it was sent (one per step of a run)."""

    calls: list[int] = field(default_factory=list)


@contextmanager
def scripted_model(script: Script, model_name: str = "scripted") -> Iterator[tuple[str, Recorder]]:
    """Register `script` as a streaming model; yield its model id and a call recorder."""
    recorder = Recorder()
    model_id = f"test:{uuid.uuid4().hex[:8]}"

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        recorder.calls.append(len(messages))
        async for item in script(messages, info):
            yield item

    register_model(model_id, lambda: FunctionModel(stream_function=stream, model_name=model_name))
    try:
        yield model_id, recorder
    finally:
        unregister_model(model_id)


def tool_rounds(messages: list[ModelMessage]) -> int:
    """How many tool results the run has seen so far."""
    return sum(1 for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart))


def text_then_tool(rounds: int = 1, tool: str = "current_time", args: str = "{}") -> Script:
    """Streams a sentence and calls `tool` for `rounds` rounds, then streams a final answer."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        done = tool_rounds(messages)
        if done < rounds:
            yield "Checking "
            yield "the time."
            yield {0: DeltaToolCall(name=tool, json_args=args, tool_call_id=f"call_{done}")}
        else:
            yield "It is "
            yield "noon."

    return script


def many_chunks(n: int) -> Script:
    """Streams `n` short text chunks (`c0 `, `c1 `, ...) and nothing else."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        for i in range(n):
            yield f"c{i} "

    return script
