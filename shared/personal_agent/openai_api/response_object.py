"""A run as an OpenAI `Response` object, read from Postgres (the source of truth): its status, its output items
(each model response's text as a `message`, a structured answer as its JSON text, calls of the caller's own tools
as `function_call`s; the agent's own tools are not shown), its usage from the ledger. Also its input items."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from personal_agent.agents.config import BUILTIN_SLUG
from personal_agent.errors import NotFound
from personal_agent.knowledge.cited import Sources
from personal_agent.openai_api.response_schema import RESPONSE_ID_PREFIX, ResponseRequest
from personal_agent.runs.store import RunRow
from personal_agent.spec.run_spec import OUTPUT_TOOL, RunSpec

STATUS = {
    "queued": "queued",
    "running": "in_progress",
    "waiting": "in_progress",
    "succeeded": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
    "skipped": "failed",
}


def response_id(run_id: UUID) -> str:
    return f"{RESPONSE_ID_PREFIX}{run_id.hex}"


def run_id_of(value: str) -> UUID:
    """The run a response id names; 404 for anything that is not one."""
    try:
        if not value.startswith(RESPONSE_ID_PREFIX):
            raise ValueError(value)
        return UUID(hex=value.removeprefix(RESPONSE_ID_PREFIX))
    except ValueError as exc:
        raise NotFound(f"No response found with id '{value[:80]}'.", code="response_not_found") from exc


def item_id(message_id: str) -> str:
    """An output message item's id from the AG-UI message id (`run:request:part`), the same live and stored."""
    return "msg_" + message_id.replace("-", "").replace(":", "_")


def sources_item_id(response: str) -> str:
    """The last message item of an answer that searched the knowledge base: its numbered sources."""
    return f"msg_sources_{response.removeprefix(RESPONSE_ID_PREFIX)}"


def structured_item_id(call_id: str) -> str:
    """The message item of a structured answer: named after its `final_result` call."""
    return f"msg_{call_id}"


def model_name(spec: RunSpec) -> str:
    """What the caller named: the agent's slug, or the model for the built-in agent."""
    if spec.agent is not None and spec.agent.slug != BUILTIN_SLUG:
        return spec.agent.slug
    return spec.model


def echo_of(body: ResponseRequest) -> dict[str, Any]:
    """What the response object repeats of its request (kept in the run's spec, so every read shows it)."""
    return {
        "instructions": body.instructions,
        "previous_response_id": body.previous_response_id,
        "store": body.store,
        "tool_choice": "auto" if body.tool_choice is None else body.tool_choice,
        "metadata": body.metadata or {},
    }


def skeleton(spec: RunSpec, status: str, created_at: int) -> dict[str, Any]:
    """The response object before it has output (`response.created`): from the spec alone, so a replay is equal."""
    schema = spec.output_schema
    text_format = {"type": "json_schema", "name": "output", "schema": schema, "strict": True} if schema else None
    echo = spec.echo or {}
    return {
        "id": response_id(spec.run_id),
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": spec.mode == "durable",
        "error": None,
        "incomplete_details": None,
        "instructions": echo.get("instructions"),
        "max_output_tokens": spec.model_settings.max_tokens,
        "model": model_name(spec),
        "output": [],
        "parallel_tool_calls": True,
        "previous_response_id": echo.get("previous_response_id"),
        "store": echo.get("store", True),
        "temperature": spec.model_settings.temperature,
        "top_p": spec.model_settings.top_p,
        "text": {"format": text_format or {"type": "text"}},
        "tool_choice": echo.get("tool_choice", "auto"),
        "tools": [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
            for t in spec.client_tools
        ],
        "truncation": "disabled",
        "usage": None,
        "metadata": echo.get("metadata", {}),
    }


def response_object(
    row: RunRow, messages: list[dict[str, Any]], tokens: tuple[int, int], questions: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """The run's response object now (its own stored messages, oldest first; its tokens from the ledger; the
    questions it waits on, each with its `question_id`)."""
    spec = RunSpec.model_validate(row.spec)
    body = skeleton(spec, STATUS.get(row.status, "in_progress"), int(row.created_at.timestamp()))
    answer = messages[spec.input_messages :]
    body["output"] = output_items(spec, answer) + [question_item(q) for q in questions]
    footnote = Sources.of_messages(answer).footnote() if spec.answer_schema is None else ""
    if row.status == "succeeded" and footnote:
        body["output"].append(message_item(sources_item_id(body["id"]), footnote))
    if row.status == "failed":
        error = row.error or {}
        body["error"] = {"code": str(error.get("code", "server_error")), "message": str(error.get("message", ""))}
    if row.status == "cancelled":
        body["incomplete_details"] = {"reason": "cancelled"}
    body["usage"] = {
        "input_tokens": tokens[0],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": tokens[1],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens[0] + tokens[1],
    }
    return body


def output_items(spec: RunSpec, answer: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer's messages as output items, in order."""
    client = {t.name for t in spec.client_tools}
    items: list[dict[str, Any]] = []
    responses = [m for m in answer if m.get("kind") == "response"]
    for index, message in enumerate(responses):
        for part_index, part in enumerate(message.get("parts", [])):
            key = f"{spec.run_id}:{index}:{part_index}"
            if part.get("part_kind") == "text" and part.get("content"):
                items.append(message_item(item_id(key), str(part["content"])))
            elif part.get("part_kind") == "tool-call" and part.get("tool_name") == OUTPUT_TOOL:
                items.append(message_item(structured_item_id(str(part.get("tool_call_id"))), _args(part.get("args"))))
            elif part.get("part_kind") == "tool-call" and part.get("tool_name") in client:
                items.append(call_item(str(part["tool_call_id"]), str(part["tool_name"]), _args(part.get("args"))))
    return items


ASK_USER = "ask_user"


def question_item(question: dict[str, Any]) -> dict[str, Any]:
    """A question the run waits on (`question_asked`'s value, or the question's row args with its `question_id`) as
    a function call of `ask_user` whose call id is the question's id."""
    asked = {k: question.get(k) for k in ("question", "choices", "schema") if question.get(k) is not None}
    return call_item(str(question["question_id"]), ASK_USER, json.dumps(asked))


def message_item(item: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = (
        [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}] if status == "completed" else []
    )
    return {"id": item, "type": "message", "status": status, "role": "assistant", "content": content}


def call_item(call_id: str, name: str, arguments: str, status: str = "completed") -> dict[str, Any]:
    return {
        "id": f"fc_{call_id}",
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }


def _args(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args or {})


def input_items(spec: RunSpec, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items the response was given (its own stored messages before its answer), newest first as OpenAI lists
    them."""
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages[: spec.input_messages]):
        for part_index, part in enumerate(message.get("parts", [])):
            key = f"{spec.run_id.hex}_in_{index}_{part_index}"
            items += _input_item(key, part)
    return list(reversed(items))


def _input_item(key: str, part: dict[str, Any]) -> list[dict[str, Any]]:
    kind = part.get("part_kind")
    if kind in ("user-prompt", "system-prompt"):
        role = "user" if kind == "user-prompt" else "system"
        content = part.get("content")
        texts = [content] if isinstance(content, str) else [c for c in content or [] if isinstance(c, str)]
        parts = [{"type": "input_text", "text": t} for t in texts]
        return [{"id": f"msg_{key}", "type": "message", "role": role, "status": "completed", "content": parts}]
    if kind == "tool-return":
        output = part.get("content")
        return [
            {
                "id": f"fco_{key}",
                "type": "function_call_output",
                "call_id": part.get("tool_call_id"),
                "output": output if isinstance(output, str) else json.dumps(output),
                "status": "completed",
            }
        ]
    if kind == "text":
        return [message_item(f"msg_{key}", str(part.get("content", "")))]
    if kind == "tool-call":
        return [call_item(str(part.get("tool_call_id")), str(part.get("tool_name")), _args(part.get("args")))]
    return []
