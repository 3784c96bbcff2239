"""A tool that needs approval before it acts (`send_email`), and a script that calls it once then answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall


async def email_script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    if not returns:
        yield {
            0: DeltaToolCall(
                name="send_email", json_args='{"to": "bob@example.com", "subject": "hi"}', tool_call_id="mail_1"
            )
        }
    else:
        yield f"Done: {returns[-1].content}"
