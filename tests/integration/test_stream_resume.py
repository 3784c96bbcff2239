"""The SSE relay resumes without loss: for every cut point, reconnecting with Last-Event-ID gives exactly
the rest. Also: retention expiry, the feed, and the AG-UI endpoint."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx
from ag_ui.core import RunAgentInput, UserMessage
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from personal_agent.bus import get_bus
from personal_agent.bus.key_names import run_stream
from tests.auth import auth_headers
from tests.runs import EVENT, start_run
from tests.scripted import many_chunks, scripted_model, text_then_tool
from tests.sse import parse_frames, read_events


async def test_every_cut_point_resumes_exactly(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    # RUN_STARTED, STEP_STARTED, TEXT_MESSAGE_START, 194 deltas, TEXT_MESSAGE_END, STEP_FINISHED, RUN_FINISHED = 200
    with scripted_model(many_chunks(194)) as (model, _):
        run = await start_run(http, headers, model)
        full = await read_events(http, run["events_url"], headers)
    assert len(full) == 200
    for k in range(1, 200):
        head = await read_events(http, run["events_url"], headers, limit=k)  # read K, then drop
        assert head == full[:k]
        rest = await read_events(http, run["events_url"], headers, last_event_id=head[-1].id)
        assert rest == full[k:], f"cut at {k}"
    # ?after= works like the header for clients that cannot set it
    after = await read_events(http, f"{run['events_url']}?after={full[99].id}", headers)
    assert after == full[100:]
    # A client that already has the terminal event (a browser reconnecting after RUN_FINISHED) gets an empty
    # stream that closes at once, not heartbeats until the stream's lifetime runs out.
    assert full[-1].type == "RUN_FINISHED"
    ended = read_events(http, run["events_url"], headers, last_event_id=full[-1].id)
    assert await asyncio.wait_for(ended, timeout=10) == []


async def test_a_resume_point_older_than_retention_gets_resume_expired(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(text_then_tool(rounds=0)) as (model, _):
        run = await start_run(http, headers, model)
        full = await read_events(http, run["events_url"], headers)
    # Retention ends: the stream is gone while the run row (and transcript) stays.
    bus = get_bus()
    await bus.close()
    import redis.asyncio as aioredis

    from personal_agent.settings import get_settings

    direct = aioredis.from_url(str(get_settings().redis_url))
    await direct.delete(run_stream(tenant.org_id, run["run_id"]))
    await direct.aclose()
    from personal_agent.bus import reset_bus

    await reset_bus()
    frames = await read_events(http, run["events_url"], headers, last_event_id=full[2].id)
    assert [(f.type, f.data.get("name")) for f in frames] == [("CUSTOM", "resume_expired")]
    fresh = await read_events(http, run["events_url"], headers)
    assert [(f.type, f.data.get("name")) for f in fresh] == [("CUSTOM", "resume_expired")]


async def test_feed_announces_runs_started_elsewhere(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(text_then_tool(rounds=0)) as (model, _):
        connected = asyncio.Event()
        reader = asyncio.create_task(read_events(http, "/api/v1/feed", headers, limit=2, connected=connected))
        await asyncio.wait_for(connected.wait(), 30)
        # Another tab: a different client starts the run.
        async with httpx.AsyncClient(base_url=str(http.base_url)) as other_tab:
            run = await start_run(other_tab, headers, model)
        frames = await asyncio.wait_for(reader, 30)
    assert [(f.data["name"], f.data["value"]["run_id"]) for f in frames] == [
        ("run_started", run["run_id"]),
        ("run_finished", run["run_id"]),
    ]
    assert frames[1].data["value"]["status"] == "succeeded"


async def test_agui_endpoint_streams_the_run_in_the_response(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    run_input = RunAgentInput(
        thread_id="thread-1",
        run_id="client-run-1",
        state={},
        tools=[],
        context=[],
        forwarded_props={},
        messages=[UserMessage(id="m1", role="user", content="hello")],
    )
    body = run_input.model_dump(mode="json", by_alias=True)
    with scripted_model(text_then_tool(rounds=1)) as (model, _):
        from personal_agent.settings import get_settings

        original = get_settings().default_model
        get_settings().default_model = model
        try:
            frames = []
            async with http.stream("POST", "/api/v1/agui/default", json=body, headers=headers) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                from tests.sse import parse_frames

                lines = [line async for line in response.aiter_lines() if not line.startswith(":")]
                frames, _ = parse_frames([*lines, ""])
        finally:
            get_settings().default_model = original
    for frame in frames:
        EVENT.validate_python(frame.data)
    assert frames[0].type == "RUN_STARTED" and frames[-1].type == "RUN_FINISHED"
    assert (frames[0].data["threadId"], frames[0].data["runId"]) == ("thread-1", "client-run-1")
    assert "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT").endswith("It is noon.")
    unknown = await http.post("/api/v1/agui/nobody", json=body, headers=headers)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "agent_not_found")


async def test_an_idle_stream_stays_open_and_delivers_later_events(http: httpx.AsyncClient, make_tenant: Any) -> None:
    """A run that is quiet for longer than a Redis client's default socket timeout (5 s) keeps its stream:
    the relay's heartbeat (set to 6 s here) arrives, then the run's later events."""
    from personal_agent.settings import get_settings

    headers = auth_headers(make_tenant())
    gate = threading.Event()  # the scripted model runs on the live server's loop, in another thread

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        yield "waiting "
        await asyncio.to_thread(gate.wait, 60)
        yield "done"

    settings = get_settings()
    original = settings.sse_heartbeat_seconds
    settings.sse_heartbeat_seconds = 6.0
    lines: list[str] = []
    released_on_ping = False
    try:
        with scripted_model(slow) as (model, _):
            run = await start_run(http, headers, model)
            async with http.stream("GET", run["events_url"], headers=headers, timeout=60) as response:
                async for line in response.aiter_lines():
                    lines.append(line)
                    if line == ": ping" and any('"waiting "' in seen for seen in lines):
                        released_on_ping = True  # quiet for a whole heartbeat, and the stream is still open
                        gate.set()
    finally:
        settings.sse_heartbeat_seconds = original
        gate.set()
    frames, _ = parse_frames([*[line for line in lines if not line.startswith(":")], ""])
    assert released_on_ping
    assert frames[-1].type == "RUN_FINISHED"
    assert "".join(f.data.get("delta", "") for f in frames) == "waiting done"


def paced_chunks(n: int, every: int, pause: float) -> Any:
    """`n` deltas with a short pause after every `every`: batches end by size, by time and by the message's end."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        for i in range(n):
            yield f"p{i} "
            if i % every == every - 1:
                await asyncio.sleep(pause)

    return script


async def test_cut_points_inside_batched_deltas_resume_exactly_while_the_run_streams(
    http: httpx.AsyncClient, make_tenant: Any, monkeypatch: Any
) -> None:
    from personal_agent.settings import get_settings

    monkeypatch.setenv("PA_EVENT_BATCH_MS", "20")  # wide batches: many cut points fall inside one
    get_settings.cache_clear()
    try:
        headers = auth_headers(make_tenant())
        with scripted_model(paced_chunks(150, every=15, pause=0.004)) as (model, _):
            for k in (1, 3, 17, 40, 77, 120, 154):
                run = await start_run(http, headers, model)
                # Both readers follow the live run; one drops after k events and resumes from the last id it saw.
                full, head = await asyncio.gather(
                    read_events(http, run["events_url"], headers),
                    read_events(http, run["events_url"], headers, limit=k),
                )
                rest = await read_events(http, run["events_url"], headers, last_event_id=head[-1].id)
                assert len(full) == 156  # RUN/STEP/TEXT start, 150 deltas, TEXT/STEP end, RUN_FINISHED
                assert [f.data.get("delta") for f in full if f.type == "TEXT_MESSAGE_CONTENT"] == [
                    f"p{i} " for i in range(150)
                ]
                assert head + rest == full, f"cut at {k}"
                assert len({f.id for f in full}) == len(full)  # one entry id per event, batched or not
    finally:
        monkeypatch.delenv("PA_EVENT_BATCH_MS")
        get_settings.cache_clear()
