"""Responses `input` (a string, or message / function_call / function_call_output items) and `instructions` as
the run's own messages. A `function_call_output` answers a call of the same input or of the response it
continues (`previous_response_id`), whose calls the chat already holds."""

from __future__ import annotations

import json
from typing import Any

from personal_agent.errors import InvalidInput
from personal_agent.openai_api.conversation import (
    Conversation,
    add_assistant,
    add_tool_result,
    add_user,
    text_of,
)
from personal_agent.openai_api.response_schema import InputItem


def from_input(items: list[InputItem], instructions: str | None, earlier_calls: dict[str, str]) -> Conversation:
    """The run's messages; `earlier_calls`: the calls (id -> tool name) of the response this one continues."""
    conversation = Conversation(calls=dict(earlier_calls))
    if instructions:
        conversation.request_part({"part_kind": "system-prompt", "content": instructions})
    for index, item in enumerate(items):
        where = f"input[{index}]"
        if item.type == "function_call":
            if not item.call_id or not item.name:
                raise InvalidInput("a function_call needs its call_id and name", code="invalid_item", param=where)
            add_assistant(conversation, "", [(item.call_id, item.name, item.arguments or "{}")])
        elif item.type == "function_call_output":
            add_tool_result(conversation, item.call_id, _output_text(item.output), where)
        elif item.role in ("system", "developer"):
            conversation.request_part({"part_kind": "system-prompt", "content": text_of(item.content, where)})
        elif item.role == "assistant":
            add_assistant(conversation, text_of(item.content, where), [])
        elif item.role == "user":
            add_user(conversation, item.content, where)
        else:
            raise InvalidInput("a message item needs a role", code="invalid_item", param=f"{where}.role")
    return conversation.finish()


def _output_text(output: str | list[dict[str, Any]] | None) -> str:
    if isinstance(output, str) or output is None:
        return output or ""
    return "".join(str(part.get("text", "")) for part in output) or json.dumps(output)


def calls_in(messages: list[dict[str, Any]]) -> dict[str, str]:
    """The tool calls (id -> name) in stored messages (pydantic-ai JSON)."""
    return {
        str(part["tool_call_id"]): str(part["tool_name"])
        for message in messages
        if message.get("kind") == "response"
        for part in message.get("parts", [])
        if part.get("part_kind") == "tool-call"
    }
