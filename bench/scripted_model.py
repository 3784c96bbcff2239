"""The benchmarks' scripted model: the reply shape of the peer comparison in issue 17 (a 200-token reply streamed
as 200 chunks), optionally after tool calls, with no delay and no network.

A message `tools:N <text>` makes the model call `current_time` N times, one model request each, before the
reply (a "typical turn" for `bench/economics.py`); `chunks:N` changes the reply's length (one long stream for
events/s); any other message gets the 200-chunk reply at once (one request). `ttft:MS` waits MS milliseconds
before each request's first chunk and `pace:MS` that long between chunks (a real model's latency and output speed,
so what the platform does per batch of events is measured at a real stream's rate; a tool call's request waits
`ttft` and then `calls:N` chunks' worth of `pace`, its arguments being N tokens).
`bench/scripted_dev.py` serves `pa dev` with this model registered as `bench:scripted`.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

MODEL_ID = "bench:scripted"
CHUNKS = int(os.environ.get("PA_BENCH_CHUNKS", "200"))
_TOOLS = re.compile(r"\btools:(\d+)\b")
_CHUNKS = re.compile(r"\bchunks:(\d+)\b")
_TTFT = re.compile(r"\bttft:(\d+(?:\.\d+)?)\b")
_PACE = re.compile(r"\bpace:(\d+(?:\.\d+)?)\b")
_CALL = re.compile(r"\bcalls:(\d+)\b")
# Words of about the length of an LLM token (4-5 characters with the space), so a chunk is one token.
WORDS = ("the ", "run ", "has ", "one ", "more ", "word ", "for ", "you ", "and ", "then ")


def _prompt(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def _this_turn(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The messages from the latest user prompt on (earlier turns' tool calls do not count)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            return messages[i:]
    return messages


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    prompt = _prompt(messages)
    match = _TOOLS.search(prompt)
    wanted = int(match.group(1)) if match else 0
    sized = _CHUNKS.search(prompt)
    turn = _this_turn(messages)
    done = sum(1 for m in turn if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart))
    ttft, pace = (float(m.group(1)) / 1000 if m else 0.0 for m in (_TTFT.search(prompt), _PACE.search(prompt)))
    if ttft:
        await asyncio.sleep(ttft)
    if done < wanted and any(t.name == "current_time" for t in info.function_tools):
        call = _CALL.search(prompt)
        if pace and call:
            await asyncio.sleep(pace * int(call.group(1)))
        yield {0: DeltaToolCall(name="current_time", json_args="{}", tool_call_id=f"bench_{done}")}
        return
    for i in range(int(sized.group(1)) if sized else CHUNKS):
        if pace and i:
            await asyncio.sleep(pace)
        yield WORDS[i % len(WORDS)]


def scripted_model() -> FunctionModel:
    return FunctionModel(stream_function=_stream, model_name=MODEL_ID)


def register() -> None:
    """Offer the model to runs in this process (priced at zero: the platform's own costs are what is measured)."""
    from personal_agent.models.catalog import register_model

    register_model(MODEL_ID, scripted_model, "Bench scripted model", input_price=0.0, output_price=0.0)
