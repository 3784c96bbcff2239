"""Inline runs end to end over HTTP: AG-UI event sequence, usage ledger, cancel vs disconnect, bad input."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.models.function import AgentInfo

from tests import db_state
from tests.auth import auth_headers
from tests.runs import EVENT, start_run
from tests.scripted import scripted_model, text_then_tool
from tests.sse import Frame, read_events


async def test_scripted_run_gives_the_expected_agui_sequence(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(text_then_tool(rounds=1)) as (model, _):
        run = await start_run(http, headers, model)
        frames = await read_events(http, run["events_url"], headers)
    for frame in frames:
        EVENT.validate_python(frame.data)  # every event is a valid AG-UI event
    assert [f.type for f in frames] == [
        "RUN_STARTED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "STEP_FINISHED",
        "STEP_STARTED",
        "TOOL_CALL_RESULT",
        "STEP_FINISHED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    assert frames[0].data["runId"] == run["run_id"] and frames[0].data["threadId"] == run["chat_id"]
    deltas = "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert deltas == "Checking the time.It is noon."
    assert [f.data["toolCallName"] for f in frames if f.type == "TOOL_CALL_START"] == ["current_time"]
    assert frames[-1].data["outcome"] == {"type": "success"}
    ids = [f.id for f in frames]
    assert all(ids) and len(set(ids)) == len(ids)

    transcript = (await http.get(f"/api/v1/chats/{run['chat_id']}/messages", headers=headers)).json()["items"]
    assert [(i["role"], i.get("text", "")) for i in transcript][0] == ("user", "what time is it?")
    assert transcript[-1]["role"] == "assistant" and transcript[-1]["text"] == "It is noon."
    assert any(i["role"] == "tool" for i in transcript)
    status = (await http.get(run["status_url"], headers=headers)).json()
    assert status["status"] == "succeeded" and status["mode"] == "inline"


async def test_three_model_responses_write_three_usage_rows_and_a_replay_writes_none_twice(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(text_then_tool(rounds=2)) as (model, recorder):
        run = await start_run(http, headers, model)
        await read_events(http, run["events_url"], headers)
        assert len(recorder.calls) == 3
        with psycopg.connect(admin_url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT request_index, model_name, cost_usd FROM usage_records WHERE run_id = %s ORDER BY 1",
                [run["run_id"]],
            ).fetchall()
            assert [r[0] for r in rows] == [0, 1, 2]
            assert all(r[1] == "scripted" and r[2] is None for r in rows)  # unpriced: unknown, not zero
        # Replay as a retried step would: drop the checkpoints after the first model response and
        # run the engine again from there.
        db_state.mark_running_again(admin_url, run["run_id"], drop_after_seq=1)
        from personal_agent.engine.runner import advance

        outcome = await advance(run["run_id"], tenant.org_id)
        assert outcome.status == "succeeded"
        assert len(recorder.calls) == 5  # the two requests after the first checkpoint ran again...
    with psycopg.connect(admin_url) as conn:
        count = conn.execute("SELECT count(*) FROM usage_records WHERE run_id = %s", [run["run_id"]]).fetchone()
    assert count == (3,)  # ...but no usage row was written twice


async def test_a_priced_model_records_its_cost(http: httpx.AsyncClient, make_tenant: Any, admin_url: str) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(text_then_tool(rounds=0), model_name="gpt-4o-mini") as (model, _):
        run = await start_run(http, headers, model)
        await read_events(http, run["events_url"], headers)
    with psycopg.connect(admin_url) as conn:
        row = conn.execute(
            "SELECT cost_usd, price_version FROM usage_records WHERE run_id = %s", [run["run_id"]]
        ).fetchone()
    assert row is not None and row[0] is not None and row[0] > 0 and row[1].startswith("genai-prices")
    usage = (await http.get("/api/v1/usage?group_by=model", headers=headers)).json()
    assert [(i["key"], i["requests"]) for i in usage["items"]] == [("gpt-4o-mini", 1)]
    assert usage["total_cost_usd"] > 0


def endless_text(chunks: int = 100_000) -> Any:
    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        for i in range(chunks):
            yield f"w{i} "  # each chunk is published (a Redis round trip) before the next

    return script


async def _wait_for_first_text(http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> list[Frame]:
    frames: list[Frame] = []
    while not any(f.type == "TEXT_MESSAGE_CONTENT" for f in frames):
        frames = await read_events(http, url, headers, limit=len(frames) + 1)
    return frames


async def test_cancel_stops_a_long_streaming_run(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(endless_text()) as (model, _):
        run = await start_run(http, headers, model)
        await _wait_for_first_text(http, run["events_url"], headers)
        cancelled = await http.post(f"/api/v1/runs/{run['run_id']}/cancel", headers=headers)
        assert cancelled.status_code == 202 and cancelled.json()["cancelled"] is True
        frames = await read_events(http, run["events_url"], headers, timeout=30)
    assert [f.type for f in frames[-3:]] == ["TEXT_MESSAGE_END", "CUSTOM", "RUN_FINISHED"]
    assert frames[-2].data["name"] == "run_cancelled" and frames[-1].data["outcome"] == {"type": "cancelled"}
    streamed = sum(1 for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert 0 < streamed < 100_000
    assert (await http.get(run["status_url"], headers=headers)).json()["status"] == "cancelled"
    transcript = (await http.get(f"/api/v1/chats/{run['chat_id']}/messages", headers=headers)).json()["items"]
    assert transcript[-1]["role"] == "assistant" and transcript[-1]["text"].startswith("w0 w1")


async def test_a_disconnecting_client_does_not_cancel_the_run(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(endless_text(chunks=60)) as (model, _):
        run = await start_run(http, headers, model)
        first = await _wait_for_first_text(http, run["events_url"], headers)  # reads, then drops the connection
        rest = await read_events(http, run["events_url"], headers, last_event_id=first[-1].id)
    assert rest[-1].type == "RUN_FINISHED" and rest[-1].data["outcome"] == {"type": "success"}
    text = "".join(f.data["delta"] for f in first + rest if f.type == "TEXT_MESSAGE_CONTENT")
    assert text == "".join(f"w{i} " for i in range(60))


async def test_other_org_gets_404_for_chat_run_and_events(http: httpx.AsyncClient, make_tenant: Any) -> None:
    owner, other = auth_headers(make_tenant()), auth_headers(make_tenant())
    with scripted_model(text_then_tool(rounds=0)) as (model, _):
        run = await start_run(http, owner, model)
        await read_events(http, run["events_url"], owner)
    for url in (
        f"/api/v1/chats/{run['chat_id']}",
        f"/api/v1/chats/{run['chat_id']}/messages",
        run["status_url"],
        run["events_url"],
    ):
        response = await http.get(url, headers=other)
        assert response.status_code == 404, url
        assert response.json()["code"] in ("chat_not_found", "run_not_found")
    assert (await http.post(f"/api/v1/runs/{run['run_id']}/cancel", headers=other)).status_code == 404
    posted = await http.post(f"/api/v1/chats/{run['chat_id']}/runs", json={"message": "hi"}, headers=other)
    assert posted.status_code == 404
    assert (await http.get("/api/v1/chats", headers=other)).json()["items"] == []


async def test_bad_input_is_a_4xx_with_a_stable_code_and_stores_nothing(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    url = f"/api/v1/chats/{chat['id']}/runs"
    cases = [
        (await http.post(url, json={"message": "   "}, headers=headers), 422, "empty_message"),
        (await http.post(url, json={"message": "x" * 32_001}, headers=headers), 413, "message_too_long"),
        (await http.post(url, json={"message": "hi", "model": "nope:nope"}, headers=headers), 422, "unknown_model"),
        (await http.post(url, json={"message": "hi", "mode": "sideways"}, headers=headers), 422, "invalid_input"),
        (await http.post(url, json={}, headers=headers), 422, "invalid_input"),
        (
            await http.post(
                "/api/v1/chats/00000000-0000-0000-0000-000000000000/runs", json={"message": "hi"}, headers=headers
            ),
            404,
            "chat_not_found",
        ),
        (await http.get("/api/v1/chats/not-a-uuid", headers=headers), 422, "invalid_input"),
        (await http.get("/api/v1/chats?cursor=%%%", headers=headers), 422, "invalid_cursor"),
    ]
    for response, status, code in cases:
        assert (response.status_code, response.json()["code"]) == (status, code), response.text
        assert response.json()["request_id"]
    with scripted_model(text_then_tool(rounds=0)) as (model, _):
        run = await start_run(http, headers, model, chat_id=chat["id"])
        bad = await http.get(run["events_url"], headers={**headers, "Last-Event-ID": "yesterday"})
        assert (bad.status_code, bad.json()["code"]) == (422, "invalid_last_event_id")
        await read_events(http, run["events_url"], headers)
    with psycopg.connect(admin_url) as conn:
        runs = conn.execute("SELECT count(*) FROM runs WHERE org_id = %s", [tenant.org_id]).fetchone()
        messages = conn.execute(
            "SELECT count(*) FROM messages WHERE org_id = %s AND kind = 'request'", [tenant.org_id]
        ).fetchone()
    assert runs == (1,) and messages == (1,)


async def test_transcript_messages_are_pydantic_ai_json(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(text_then_tool(rounds=1)) as (model, _):
        run = await start_run(http, headers, model)
        await read_events(http, run["events_url"], headers)
    with psycopg.connect(admin_url) as conn:
        stored = [
            r[0] for r in conn.execute("SELECT message FROM messages WHERE chat_id = %s ORDER BY id", [run["chat_id"]])
        ]
    messages = ModelMessagesTypeAdapter.validate_python(stored)
    assert [m.kind for m in messages] == ["request", "response", "request", "response"]
