"""The offline demo model ("Demo model (offline)"): streams a reply and calls tools, so every path works without a
provider key. A plain message is understood by a few rules (`models/demo_intents.py`: a question about your
documents searches them, "remember that …" saves a memory, the weather asks the demo MCP server, "research X and Y
in parallel" starts two sub-agents, "send …" asks a person first); its answers come from `models/demo_replies.py`.

A message that starts with `/tool NAME {json args}` makes it call tool NAME with those args (default `{}`), so
every offered tool (first-party or MCP) can be tried, tested and benchmarked offline."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from personal_agent.models.demo_intents import DOCUMENT_NOTE, Offered, plan
from personal_agent.models.demo_replies import chat_answer, research_answer, tool_answer

TOOL_COMMAND = "/tool"


def _last_user_text(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    content = part.content
                    return content if isinstance(content, str) else " ".join(c for c in content if isinstance(c, str))
    return ""


def _images_seen(messages: list[ModelMessage]) -> str:
    """What the demo 'sees' of the newest user turn's images (it reads their type and size, like a vision model
    reads pixels), so an attachment's path to the model can be tried offline."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                    images = [c for c in part.content if isinstance(c, BinaryContent)]
                    seen = [f"{c.media_type}, {len(c.data)} bytes" for c in images]
                    return f"I can see {len(seen)} attached image(s) ({'; '.join(seen)}). " if seen else ""
                if isinstance(part, UserPromptPart):
                    return ""
    return ""


def parse_tool_command(text: str) -> tuple[str, dict[str, object]] | str | None:
    """`/tool NAME {json args}` as (NAME, args); a message why when it is malformed; None for other text."""
    stripped = text.strip()
    head, _, rest = stripped.partition(" ")
    if head != TOOL_COMMAND:
        return None
    name, _, raw = rest.strip().partition(" ")
    if not name:
        return f"Usage: `{TOOL_COMMAND} NAME {{json args}}`."
    try:  # what follows the JSON is the notes of the message's attachments (the model reads them after its text)
        args = json.JSONDecoder().raw_decode(raw.strip())[0] if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return f"The arguments of `{name}` are not valid JSON ({exc.msg})."
    if not isinstance(args, dict):
        return f"The arguments of `{name}` must be a JSON object."
    return name, args


async def _words(text: str, delay: float) -> AsyncIterator[str]:
    for word in text.split(" "):
        if delay:
            await asyncio.sleep(delay)
        yield word + " "


async def _tool_command(
    command: tuple[str, dict[str, object]] | str, last: ModelMessage, info: AgentInfo, turn: int, delay: float
) -> AsyncIterator[str | DeltaToolCalls]:
    """Answer a `/tool` message: call the tool, then quote its result (or say why it cannot)."""
    if isinstance(command, str):
        yield command
        return
    name, args = command
    answered = (
        [p for p in last.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
        if isinstance(last, ModelRequest)
        else []
    )
    if answered:
        part = answered[0]
        if isinstance(part, ToolReturnPart):
            reply = f"`{part.tool_name}` returned: {part.model_response_str()}"
        else:
            reply = f"`{name}` failed: {part.model_response()}"
        async for word in _words(reply, delay):
            yield word
        return
    offered = sorted(t.name for t in info.function_tools)
    if name not in offered:
        yield f"The tool `{name}` is not offered to me. Offered tools: {', '.join(offered) or 'none'}."
        return
    yield {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=f"demo_tool_{turn}")}


def _offered(info: AgentInfo) -> Offered:
    properties = {t.name: list((t.parameters_json_schema or {}).get("properties", {})) for t in info.function_tools}
    return Offered(frozenset(t.name for t in info.function_tools), properties)


def _document_attached(messages: list[ModelMessage]) -> bool:
    """Whether a user message of the conversation carried a document (the model reads a note in its place)."""
    for message in messages:
        for part in message.parts if isinstance(message, ModelRequest) else ():
            contents = [part.content] if isinstance(part, UserPromptPart) and isinstance(part.content, str) else []
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                contents = [c for c in part.content if isinstance(c, str)]
            if any(DOCUMENT_NOTE in c for c in contents):
                return True
    return False


def _call_args(messages: list[ModelMessage]) -> dict[str, dict[str, Any]]:
    """The args of every tool call the demo made, by call id (its answer names what it asked for)."""
    return {
        call.tool_call_id: call.args_as_dict()
        for message in messages
        if isinstance(message, ModelResponse)
        for call in message.tool_calls
    }


def _answer_results(messages: list[ModelMessage], last: ModelRequest, text: str) -> str:
    args = _call_args(messages)
    results = [
        (
            p.tool_name or "tool",
            p.content if isinstance(p, ToolReturnPart) else p.model_response(),
            args.get(p.tool_call_id, {}),
            isinstance(p, RetryPromptPart),
        )
        for p in last.parts
        if isinstance(p, ToolReturnPart | RetryPromptPart)
    ]
    return tool_answer(results, text, _images_seen(messages))


async def _demo_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    delay = float(os.environ.get("PA_DEMO_DELAY_MS", "40")) / 1000
    last = messages[-1]
    text = _last_user_text(messages)
    command = parse_tool_command(text)
    if command is not None:
        async for item in _tool_command(command, last, info, len(messages), delay):
            yield item
        return
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart | RetryPromptPart) for p in last.parts):
        async for word in _words(_answer_results(messages, last, text), delay):
            yield word
        return
    chosen = plan(text, _offered(info), _document_attached(messages))
    if not chosen.calls:
        answer = research_answer(text) if chosen.intent == "research" else chat_answer(text, _images_seen(messages))
        async for word in _words(answer, delay):
            yield word
        return
    yield chosen.lead
    yield {
        i: DeltaToolCall(name=call.name, json_args=json.dumps(call.args), tool_call_id=f"demo_{len(messages)}_{i}")
        for i, call in enumerate(chosen.calls)
    }


def demo_model() -> FunctionModel:
    """A scripted model that behaves like a tool-using assistant, offline."""
    return FunctionModel(stream_function=_demo_stream, model_name="demo")
