"""Helpers of the MCP server tests: the demo MCP server on loopback, registering it through the admin API, and
running a chat turn that may call its tools."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from personal_agent.local.demo_mcp import DemoLog, demo_mcp_app
from tests.live_server import LiveServer
from tests.sse import Frame, read_events

SECRET = "Bearer mcp-secret-5b1e9d7c3a"
ADMIN = ("org-admin",)
GATED_NOTE = {"post_note": {"acts": True, "approval": "gate"}}


@contextmanager
def serve_demo() -> Iterator[tuple[LiveServer, DemoLog]]:
    """The demo MCP server on loopback and what it saw."""
    log = DemoLog()
    server = LiveServer(demo_mcp_app(log)).start()
    try:
        yield server, log
    finally:
        server.stop()


async def register(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    url: str,
    *,
    name: str = "demo",
    tier: int = 2,
    policies: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Register the server at `url` (its `/mcp` endpoint) with a sealed auth header; `post_note` acts, `gate`."""
    created = await http.post(
        "/api/v1/admin/mcp-servers",
        headers=headers,
        json={
            "name": name,
            "url": f"{url}/mcp",
            "trust_tier": tier,
            "headers": {"Authorization": SECRET},
            "tool_policies": GATED_NOTE if policies is None else policies,
        },
    )
    assert created.status_code == 201, created.text
    return dict(created.json())


def normalized(frames: list[Frame]) -> list[tuple[Any, ...]]:
    keep = ("delta", "toolCallName", "content", "stepName", "outcome", "name", "role")
    return [(f.type, *(f.data.get(k) for k in keep)) for f in frames]


async def run(
    http: httpx.AsyncClient, headers: dict[str, str], model: str, tools: list[str], mode: str, **chat: Any
) -> tuple[dict[str, Any], list[Frame]]:
    """Start a run in a new chat through the API and read its events to the end."""
    chat_id = (await http.post("/api/v1/chats", json=chat, headers=headers)).json()["id"]
    started = await http.post(
        f"/api/v1/chats/{chat_id}/runs",
        headers=headers,
        json={"message": "weather in Paris?", "model": model, "mode": mode, "tools": tools},
    )
    assert started.status_code == 202, started.text
    return started.json(), await read_events(http, started.json()["events_url"], headers)
