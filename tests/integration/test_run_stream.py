"""`POST /chats/{chat_id}/runs/stream`: a run started with its events in the same response is the same run as
one started with `POST /chats/{chat_id}/runs` and read at its events URL, resumable there when the response
drops; refusals are the same 4xx and store nothing."""

from __future__ import annotations

from typing import Any

import httpx

from tests.auth import auth_headers
from tests.runs import EVENT
from tests.scripted import many_chunks, scripted_model, text_then_tool
from tests.sse import Frame, read_events, response_frames


async def post_stream(
    http: httpx.AsyncClient, chat_id: str, body: dict[str, Any], headers: dict[str, str], limit: int | None = None
) -> tuple[httpx.Headers, list[Frame]]:
    """The response headers and the frames of the POST (all, or the first `limit`, then the connection drops)."""
    async with http.stream("POST", f"/api/v1/chats/{chat_id}/runs/stream", json=body, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        return response.headers, await response_frames(response, limit)


async def new_chat(http: httpx.AsyncClient, headers: dict[str, str]) -> str:
    chat = await http.post("/api/v1/chats", json={"title": "t"}, headers=headers)
    assert chat.status_code == 201, chat.text
    return str(chat.json()["id"])


async def test_the_response_streams_the_run_that_its_events_url_replays(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    headers = auth_headers(make_tenant())
    chat_id = await new_chat(http, headers)
    with scripted_model(text_then_tool(rounds=1)) as (model, _):
        body = {"message": "what time is it?", "model": model, "mode": "inline"}
        got, frames = await post_stream(http, chat_id, body, headers)
    run_id = got["x-run-id"]
    assert got["content-location"] == f"/api/v1/runs/{run_id}/events"
    for frame in frames:
        EVENT.validate_python(frame.data)
    assert [frames[0].type, frames[-1].type] == ["RUN_STARTED", "RUN_FINISHED"]
    assert frames[0].data["runId"] == run_id and frames[0].data["threadId"] == chat_id
    assert "TOOL_CALL_RESULT" in {f.type for f in frames}
    # The same run, event for event, at its events URL; stored, finished and in the chat's transcript.
    assert await read_events(http, got["content-location"], headers) == frames
    status = await http.get(f"/api/v1/runs/{run_id}", headers=headers)
    assert (status.json()["status"], status.json()["chat_id"]) == ("succeeded", chat_id)
    transcript = (await http.get(f"/api/v1/chats/{chat_id}/messages", headers=headers)).json()
    assert "what time is it?" in str(transcript)


async def test_a_dropped_response_resumes_at_its_events_url_without_loss(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    headers = auth_headers(make_tenant())
    chat_id = await new_chat(http, headers)
    with scripted_model(many_chunks(120)) as (model, _):
        body = {"message": "long", "model": model, "mode": "inline"}
        got, head = await post_stream(http, chat_id, body, headers, limit=37)
        rest = await read_events(http, got["content-location"], headers, last_event_id=head[-1].id)
    full = await read_events(http, got["content-location"], headers)
    assert len(full) == 126 and head + rest == full


async def test_refusals_are_the_same_4xx_as_starting_a_run_and_store_nothing(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    owner, other = auth_headers(make_tenant()), auth_headers(make_tenant())
    chat_id = await new_chat(http, owner)
    url = f"/api/v1/chats/{chat_id}/runs/stream"
    cases = [
        (await http.post(url, json={"message": "hi"}, headers=other), 404, "chat_not_found"),
        (await http.post(url, json={"message": "   "}, headers=owner), 422, "empty_message"),
        (await http.post(url, json={"message": "x" * 32_001}, headers=owner), 413, "message_too_long"),
        (await http.post(url, json={"message": "hi", "model": "nope:nope"}, headers=owner), 422, "unknown_model"),
        (await http.post(url, json={}, headers=owner), 422, "invalid_input"),
        (await http.post(url, json={"message": "hi"}), 401, "missing_token"),
    ]
    token = owner["Authorization"].split()[1]
    cases.append((await http.post(f"{url}?access_token={token}", json={"message": "hi"}), 400, "token_in_query"))
    for response, status, code in cases:
        assert (response.status_code, response.json()["code"]) == (status, code), response.text
    transcript = await http.get(f"/api/v1/chats/{chat_id}/messages", headers=owner)
    assert transcript.status_code == 200 and transcript.json()["items"] == []
    assert (await http.get("/api/v1/chats", headers=other)).json()["items"] == []
