"""Scripted sub-agent trees for tests: a parent that delegates, children that take a scripted time."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model
from tests.sse import Frame

SLEEP = re.compile(r"^sleep (\d+(?:\.\d+)?)$")


def user_text(messages: list[ModelMessage]) -> str:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def delegating(calls: list[dict[str, Any]], offered: list[list[str]] | None = None) -> Any:
    """A model for a whole tree. The parent (any other message) calls `delegate` once per item of `calls` in one
    response, then answers with the children's results. A child whose task is `sleep N` streams for N seconds
    in small chunks (so a cancel lands between them) and answers `slept N`; one whose task is `break` fails (it
    calls a tool nobody has until pydantic-ai gives up). `offered` records the tools each
    request was offered."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if offered is not None:
            offered.append(sorted(t.name for t in info.function_tools))
        text = user_text(messages)
        match = SLEEP.match(text)
        if match:
            seconds = float(match.group(1))
            steps = max(1, int(seconds / 0.1))
            for _ in range(steps):
                await asyncio.sleep(seconds / steps)
                yield "."
            yield f" slept {match.group(1)}"
            return
        if text == "break":  # a child that fails: it keeps calling a tool nobody has
            yield {0: DeltaToolCall(name="no_such_tool", json_args="{}", tool_call_id=f"x{len(messages)}")}
            return
        last = messages[-1]
        parts = list(last.parts) if isinstance(last, ModelRequest) else []
        results = [p for p in parts if isinstance(p, ToolReturnPart)]
        refused = [p for p in parts if isinstance(p, RetryPromptPart)]
        if results or refused:
            said = " | ".join(p.model_response_str() for p in results)
            yield "Children said: " + said + "".join(f" | Refused: {p.model_response()}" for p in refused)
            return
        yield "Delegating."
        yield {
            i: DeltaToolCall(name="delegate", json_args=json.dumps(args), tool_call_id=f"d{i}")
            for i, args in enumerate(calls)
        }

    return script


@contextmanager
def priced_model(script: Any, *, tier: int = 2) -> Iterator[str]:
    """`script` registered as a model priced at $1 / $10 per million input / output tokens (a request reserves
    about $0.16 of budget: its whole output token limit)."""
    model_id = f"test:priced-{uuid.uuid4().hex[:8]}"
    register_model(
        model_id,
        lambda: FunctionModel(stream_function=script, model_name=model_id),
        tier=tier,
        input_price=1.0,
        output_price=10.0,
    )
    try:
        yield model_id
    finally:
        unregister_model(model_id)


def sleepers(*seconds: float) -> list[dict[str, Any]]:
    return [{"task": f"sleep {s:g}"} for s in seconds]


def normalized(frames: list[Frame]) -> list[tuple[Any, ...]]:
    """A parent's event sequence without ids and timestamps; sub-agent events keep their name, task, status."""
    keep = ("delta", "toolCallName", "content", "stepName", "outcome", "name", "role")
    out = []
    for f in frames:
        value = f.data.get("value") if isinstance(f.data.get("value"), dict) else {}
        extra = tuple(value.get(k) for k in ("task", "status", "request_index", "tool_call_id")) if value else ()
        out.append((f.type, *(f.data.get(k) for k in keep), *extra))
    return out


def run_rows(admin_url: str, parent_id: Any) -> list[dict[str, Any]]:
    """The parent's children as stored (status, times, delegation), by task."""
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute(
            "SELECT id, status, started_at, finished_at, spec, error, cancel_requested FROM runs"
            " WHERE parent_run_id = %s ORDER BY spec->'delegation'->>'tool_call_id'",
            [str(parent_id)],
        ).fetchall()
    return [
        {
            "id": r[0],
            "status": r[1],
            "started_at": r[2],
            "finished_at": r[3],
            "spec": r[4],
            "error": r[5],
            "cancel_requested": r[6],
        }
        for r in rows
    ]
