"""Workflow helpers for tests: a model that echoes its prompt, Standard Webhooks signing, creating workflows,
reading a run's text and rows from the database."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo
from standardwebhooks import Webhook

from tests.sse import Frame, read_events


async def echo_prompt(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """Answers with the prompt of the run's own (last) user message."""
    prompt = next(
        p.content
        for m in reversed(messages)
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    )
    yield f"Echo: {prompt}"


def sign(secret: str, body: bytes, msg_id: str | None = None, at: datetime | None = None) -> dict[str, str]:
    """Standard Webhooks headers for `body`, as a sender's library makes them."""
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    at = at or datetime.now(UTC)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, at, body.decode()),
        "content-type": "application/json",
    }


async def create_workflow(http: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> dict[str, Any]:
    response = await http.post("/api/v1/workflows", json={"name": "ci-report", **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def fire_to_end(http: httpx.AsyncClient, hook: str, secret: str, headers: dict[str, str]) -> httpx.Response:
    """Post a signed webhook and, when it started a run, read its events to the end (a workflow's chat takes one
    run at a time: the next delivery is refused with 409 `run_in_progress` while one is going)."""
    response = await http.post(hook, content=b"{}", headers=sign(secret, b"{}"))
    if response.status_code == 202:
        await read_events(http, response.json()["events_url"], headers)
    return response


def text_of(frames: list[Frame]) -> str:
    return "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")


def db_rows(admin_url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(admin_url) as conn:
        return conn.execute(sql, list(params)).fetchall()
