"""A file attached with a question is searched once it is indexed: "what does the attached file say?" asked right
after attaching it waits for the chat's file to be read instead of answering that nothing was found (the ingest
runs elsewhere, after the upload), and a file that takes too long is named as still being read."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.knowledge import chat_pending
from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.knowledge import post_file
from tests.sse import read_events

TEXT = b"# Launch\n\nThe launch code word is periwinkle, said only once a year.\n"


@contextmanager
def searching_model(searching: asyncio.Event, seen: list[Any]) -> Iterator[str]:
    """Searches the chat's files for the code word, then answers with what it found."""
    model_id = f"test:{uuid.uuid4().hex[:8]}"

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        results = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        if not results:
            searching.set()
            yield {0: DeltaToolCall(name="search_knowledge", json_args=json.dumps({"query": "code word"}))}
            return
        seen.append(results[0].content)
        yield "done"

    register_model(model_id, lambda: FunctionModel(stream_function=stream, model_name="searcher"), tier=2)
    try:
        yield model_id
    finally:
        unregister_model(model_id)


async def _attached(http: httpx.AsyncClient, headers: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """A chat and a document attached to it, created but not uploaded yet."""
    chat = await http.post("/api/v1/chats", json={"title": "launch"}, headers=headers)
    assert chat.status_code == 201, chat.text
    body = {"filename": "launch.md", "content_type": "text/markdown", "size": len(TEXT)}
    created = await http.post(f"/api/v1/chats/{chat.json()['id']}/attachments", json=body, headers=headers)
    assert created.status_code == 201, created.text
    return str(chat.json()["id"]), created.json()


async def _ask(http: httpx.AsyncClient, headers: dict[str, str], chat_id: str, model: str) -> str:
    """A question in the chat while its file is still on its way (an upload a run cannot carry yet: 409)."""
    body = {"message": "what does the file I just attached say?", "model": model, "mode": "inline"}
    started = await http.post(f"/api/v1/chats/{chat_id}/runs", json=body, headers=headers)
    assert started.status_code == 202, started.text
    return str(started.json()["events_url"])


async def test_the_search_waits_for_a_file_uploaded_while_it_runs(http: httpx.AsyncClient, make_tenant: Any) -> None:
    """Without the wait, the search ran at once and found nothing (the file was indexed a moment later)."""
    headers = auth_headers(make_tenant())
    chat_id, attachment = await _attached(http, headers)
    searching, seen = asyncio.Event(), []
    with searching_model(searching, seen) as model:
        events = asyncio.create_task(read_events(http, await _ask(http, headers, chat_id, model),
                                                 headers, timeout=90))  # fmt: skip
        await asyncio.wait_for(searching.wait(), 60)
        # The model searches now; the file is uploaded only after: the search must wait for it to be read.
        posted = await asyncio.to_thread(post_file, attachment["upload"], TEXT, "text/markdown")
        assert posted.status_code in (200, 201, 204), posted.text
        await events
    (result,) = seen
    assert any("periwinkle" in str(p.get("text")) for p in result), result
    assert not any("still_reading" in p for p in result)


async def test_a_file_not_read_in_time_is_named_as_still_being_read(
    http: httpx.AsyncClient, make_tenant: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_pending, "WAIT_SECONDS", 0.3)  # the upload never comes: the wait ends, the run goes on
    headers = auth_headers(make_tenant())
    chat_id, attachment = await _attached(http, headers)
    searching, seen = asyncio.Event(), []
    with searching_model(searching, seen) as model:
        await read_events(http, await _ask(http, headers, chat_id, model), headers, timeout=60)
    (result,) = seen
    assert [p["still_reading"] for p in result if "still_reading" in p] == [1], result
