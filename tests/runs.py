"""Starting runs over HTTP in tests, and the AG-UI event type adapter."""

from __future__ import annotations

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
