"""Starting runs over HTTP in tests, and the AG-UI event type adapter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ag_ui.core as agui
import httpx
from pydantic import TypeAdapter

EVENT = TypeAdapter(agui.Event)


async def start_run(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    model: str,
    message: str = "what time is it?",
    chat_id: str | None = None,
) -> dict[str, Any]:
    if chat_id is None:
        chat = await http.post("/api/v1/chats", json={"title": "t"}, headers=headers)
        assert chat.status_code == 201, chat.text
        chat_id = chat.json()["id"]
    started = await http.post(
        f"/api/v1/chats/{chat_id}/runs", json={"message": message, "model": model, "mode": "inline"}, headers=headers
    )
    assert started.status_code == 202, started.text
    return {"chat_id": chat_id, **started.json()}


async def follow_approving(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], before_approving: Callable[[], None]
) -> tuple[list[Any], bool]:
    """Read a run's events to its end; if it asks for approval on the way, call `before_approving` (the test's
    checks while it waits), approve, and read on. Returns the frames and whether approval was asked."""
    from tests.sse import read_events

    frames: list[Any] = []
    approval = None
    while not frames or frames[-1].type not in ("RUN_FINISHED", "RUN_ERROR"):
        frames = await read_events(http, url, headers, limit=len(frames) + 1)
        approval = next((f for f in frames if f.data.get("name") == "approval_requested"), None)
        if approval is not None:
            break
    if approval is None:
        return frames, False
    before_approving()
    decided = await http.post(
        f"/api/v1/approvals/{approval.data['value']['approval_id']}", json={"decision": "approve"}, headers=headers
    )
    assert decided.status_code == 200, decided.text
    return await read_events(http, url, headers), True
