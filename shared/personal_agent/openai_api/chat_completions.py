"""`POST /v1/chat/completions`: one request is one run (inline; an approval it would need is denied, since the
request cannot wait for a person). Streamed as `chat.completion.chunk`s ending in `[DONE]`, or answered whole."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from personal_agent.agents.config import check_output_schema
from personal_agent.api.openai_error_shape import openai_error
from personal_agent.db import org_transaction
from personal_agent.errors import AppError, InvalidInput
from personal_agent.identity.principal import Principal
from personal_agent.openai_api import conversation as conversations
from personal_agent.openai_api.chat_schema import ChatCompletionRequest, FunctionDef, ResponseFormat
from personal_agent.openai_api.completion_builder import CompletionBuilder, RunFailed
from personal_agent.openai_api.response_schema import FunctionTool
from personal_agent.openai_api.run_events import V1Run, events, launch
from personal_agent.openai_api.targets import resolve
from personal_agent.openai_api.tool_choice import choice_of
from personal_agent.runs import store
from personal_agent.spec.run_spec import ClientTool, ModelSettings, RunSpec
from personal_agent.tools.registry import get_tool

# A failed run's code as the status OpenAI's SDKs map it to (anything else: a 502 from the model side).
_FAILURE_STATUS = {"budget_exceeded": 429, "limit_exceeded": 400, "output_invalid": 400, "no_eligible_model": 400}


async def v1_run(principal: Principal, body: ChatCompletionRequest) -> V1Run:
    """The run a request asks for; 400 (with its `param`) or 404 `model_not_found` before anything is stored."""
    target = await resolve(principal, body.model)
    stop = [body.stop] if isinstance(body.stop, str) else list(body.stop or [])
    tools = client_tools(body)
    choice = choice_of(body.tool_choice, tools)
    settings = ModelSettings(
        temperature=body.temperature,
        top_p=body.top_p,
        max_tokens=body.max_completion_tokens or body.max_tokens,
        stop_sequences=tuple(stop),
        tool_choice=choice.forced,
    )
    return V1Run(
        target=target,
        conversation=conversations.from_chat(body.messages),
        client_tools=tools if choice.offer else (),
        settings=settings,
        schema=answer_schema(body.response_format),
    )


def client_tools(body: ChatCompletionRequest) -> tuple[ClientTool, ...]:
    return client_tools_of([tool.function for tool in body.tools or []], param="tools")


def client_tools_of(functions: Sequence[FunctionDef | FunctionTool], *, param: str) -> tuple[ClientTool, ...]:
    """The caller's function tools; 400 for a name the platform's own tools use."""
    tools = []
    for index, function in enumerate(functions):
        if get_tool(function.name) is not None:
            raise InvalidInput(
                f"the tool name {function.name!r} is taken by a tool of the platform",
                code="tool_name_taken",
                param=f"{param}[{index}].name",
            )
        parameters = function.parameters or {"type": "object", "properties": {}}
        tools.append(ClientTool(name=function.name, description=function.description or "", parameters=parameters))
    return tuple(tools)


def answer_schema(response_format: ResponseFormat | None) -> dict[str, Any] | None:
    """The JSON Schema the answer must match (`json_schema`; `json_object`: any object), or None for text."""
    if response_format is None or response_format.type == "text":
        return None
    if response_format.type == "json_object":
        return {"type": "object", "properties": {}, "additionalProperties": True}
    schema = response_format.json_schema.schema_ if response_format.json_schema else None
    if schema is None:
        raise InvalidInput("json_schema needs a `schema`", code="invalid_output_schema", param="response_format")
    try:
        check_output_schema(schema)
    except InvalidInput as exc:
        raise InvalidInput(exc.message, code=exc.code, param="response_format.json_schema.schema") from exc
    return schema


def envelope(spec: RunSpec, model: str, created: int, **body: Any) -> dict[str, Any]:
    return {"id": f"chatcmpl-{spec.run_id.hex}", "created": created, "model": model, "system_fingerprint": None, **body}


async def usage(spec: RunSpec) -> dict[str, int]:
    """The run's tokens from the ledger (sub-agents included)."""
    async with org_transaction(spec.org_id) as conn:
        prompt, completion = await store.tree_tokens(conn, spec.run_id)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def failure(exc: RunFailed) -> AppError:
    return AppError(exc.message, code=exc.code, status=_FAILURE_STATUS.get(exc.code, 502))


async def answer(spec: RunSpec, body: ChatCompletionRequest, frames: AsyncIterator[str]) -> dict[str, Any]:
    """The whole `chat.completion`, once the run ended."""
    builder = CompletionBuilder(frozenset(t.name for t in spec.client_tools))
    try:
        async for event in events(frames):
            if event is not None:
                builder.feed(event)
            if builder.finish_reason:
                break
    except RunFailed as exc:
        raise failure(exc) from exc
    if builder.finish_reason is None:
        raise AppError("the run did not end in time; read it at /api/v1/runs", code="run_timeout", status=504)
    choice = {"index": 0, "message": builder.message(), "finish_reason": builder.finish_reason, "logprobs": None}
    return envelope(
        spec, body.model, int(time.time()), object="chat.completion", choices=[choice], usage=await usage(spec)
    )


async def chunks(spec: RunSpec, body: ChatCompletionRequest, frames: AsyncIterator[str]) -> AsyncIterator[str]:
    """The answer as `chat.completion.chunk` SSE frames, the usage chunk if asked for, then `[DONE]`."""
    builder = CompletionBuilder(frozenset(t.name for t in spec.client_tools))
    created = int(time.time())

    def frame(choices: list[dict[str, Any]], **extra: Any) -> str:
        data = envelope(spec, body.model, created, object="chat.completion.chunk", choices=choices, **extra)
        return f"data: {json.dumps(data, separators=(',', ':'))}\n\n"

    try:
        async for event in events(frames):
            if event is None:
                yield ": ping\n\n"
                continue
            for delta in builder.feed(event):
                yield frame([{"index": 0, "delta": delta, "finish_reason": None, "logprobs": None}])
            if builder.finish_reason:
                break
    except RunFailed as exc:
        error = failure(exc)
        yield f"data: {json.dumps(openai_error(error.status, error.code, error.message, {}))}\n\n"
        return
    if builder.finish_reason is None:
        yield f"data: {json.dumps(openai_error(504, 'run_timeout', 'the run did not end in time', {}))}\n\n"
        return
    yield frame([{"index": 0, "delta": {}, "finish_reason": builder.finish_reason, "logprobs": None}])
    if body.stream_options is not None and body.stream_options.include_usage:
        yield frame([], usage=await usage(spec))
    yield "data: [DONE]\n\n"


async def start(principal: Principal, body: ChatCompletionRequest) -> RunSpec:
    return await launch(principal, await v1_run(principal, body))
