"""The offline demo model: streams a reply and calls a tool, so every path works without a provider key.

A message that starts with `/tool NAME {json args}` makes it call tool NAME with those args (default `{}`), so
every offered tool (first-party or MCP) can be tried, tested and benchmarked offline."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

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
    try:
        args = json.loads(raw) if raw.strip() else {}
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


async def _demo_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    delay = float(os.environ.get("PA_DEMO_DELAY_MS", "40")) / 1000
    last = messages[-1]
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
    tool_names = {t.name for t in info.function_tools}
    text = _last_user_text(messages)
    command = parse_tool_command(text)
    if command is not None:
        async for item in _tool_command(command, last, info, len(messages), delay):
            yield item
        return
    if not returns and "send" in text.lower() and "send_demo_message" in tool_names:
        # An acting tool: the confidence gate asks a person first (no router model locally = no confidence).
        yield "I'll send that — it needs your approval first."
        args = json.dumps({"to": "team@example.com", "text": text[:200]})
        yield {0: DeltaToolCall(name="send_demo_message", json_args=args, tool_call_id=f"demo_send_{len(messages)}")}
        return
    if returns and returns[0].tool_name == "send_demo_message":
        for word in f"Done: {returns[0].content}".split(" "):
            if delay:
                await asyncio.sleep(delay)
            yield word + " "
        return
    if not returns and "current_time" in tool_names:
        yield "Let me check the time first."
        yield {0: DeltaToolCall(name="current_time", json_args="{}", tool_call_id=f"demo_{len(messages)}")}
        return
    now = str(returns[0].content) if returns else "unknown"
    reply = (
        f"{_images_seen(messages)}You said: *{text[:200]}*\n\nThe time is **{now}**. "
        "This answer comes from the **offline demo model**; "
        "set `OPENAI_API_KEY` or `ANTHROPIC_API_KEY` (or add a key in Settings) to talk to a real model."
    )
    for word in reply.split(" "):
        if delay:
            await asyncio.sleep(delay)
        yield word + " "


def demo_model() -> FunctionModel:
    """A scripted model that behaves like a tool-using assistant, offline."""
    return FunctionModel(stream_function=_demo_stream, model_name="demo")
