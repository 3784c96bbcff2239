"""The offline demo model: streams a reply and calls a tool, so every path works without a provider key."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

DEMO_MODEL_NAME = "offline:demo"


def _last_user_text(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


async def _demo_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    delay = float(os.environ.get("PA_DEMO_DELAY_MS", "40")) / 1000
    last = messages[-1]
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
    tool_names = {t.name for t in info.function_tools}
    text = _last_user_text(messages)
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
        f"You said: *{text[:200]}*\n\nThe time is **{now}**. This answer comes from the **offline demo model**; "
        "set `OPENAI_API_KEY` or `ANTHROPIC_API_KEY` (or add a key in Settings) to talk to a real model."
    )
    for word in reply.split(" "):
        if delay:
            await asyncio.sleep(delay)
        yield word + " "


def demo_model() -> FunctionModel:
    """A scripted model that behaves like a tool-using assistant, offline."""
    return FunctionModel(stream_function=_demo_stream, model_name="demo")
