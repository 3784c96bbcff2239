"""What keeps the streams from being abused: a per-user cap on open SSE/AG-UI streams (429 with
Retry-After, leases that lapse when a relay dies), a token in the URL only on GET streams and never in a
log, and AG-UI ids of a bounded size (refused before anything is stored)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from ag_ui.core import RunAgentInput, UserMessage
from redis.asyncio import Redis

from personal_agent.bus.key_names import stream_slots
from personal_agent.local.ports import free_port
from personal_agent.local.serving import ReadyServer
from personal_agent.settings import get_settings
from tests.auth import auth_headers, dev_issuer
from tests.runs import start_run
from tests.scripted import scripted_model, text_then_tool
from tests.sse import read_events

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def stream_cap() -> Iterator[int]:
    settings = get_settings()
    original = settings.sse_max_connections_per_user
    settings.sse_max_connections_per_user = 2
    try:
        yield 2
    finally:
        settings.sse_max_connections_per_user = original


@pytest.fixture
async def raw() -> AsyncIterator[Redis]:
    client = Redis.from_url(str(get_settings().redis_url), decode_responses=True)
    try:
        yield client
    finally:
        await client.aclose()


@asynccontextmanager
async def open_feed(http: httpx.AsyncClient, headers: dict[str, str]) -> AsyncIterator[httpx.Response]:
    """A feed stream held open (its slot taken once the headers arrived) until the block ends."""
    async with http.stream("GET", "/api/v1/feed", headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        yield response


async def wait_for_slots(raw: Redis, key: str, count: int) -> None:
    """The relay gives a slot back when it notices the client left: wait for that on the key's keyspace
    notifications (every ZREM), not on time."""
    await raw.config_set("notify-keyspace-events", "Kz")
    db = raw.connection_pool.connection_kwargs.get("db", 0)
    async with raw.pubsub() as events:
        await events.subscribe(f"__keyspace@{db}__:{key}")
        deadline = time.monotonic() + 30
        while await raw.zcard(key) != count:
            # Returns at the next notification (or None for the subscription's own confirmation).
            await events.get_message(ignore_subscribe_messages=True, timeout=5)
            assert time.monotonic() < deadline, f"{key} still holds {await raw.zcard(key)} slots"


def agui_body(thread_id: str = "thread-1", run_id: str = "client-run-1") -> dict[str, Any]:
    run_input = RunAgentInput(
        thread_id=thread_id,
        run_id=run_id,
        state={},
        tools=[],
        context=[],
        forwarded_props={},
        messages=[UserMessage(id="m1", role="user", content="hello")],
    )
    return run_input.model_dump(mode="json", by_alias=True)


async def chat_count(http: httpx.AsyncClient, headers: dict[str, str]) -> int:
    response = await http.get("/api/v1/chats", headers=headers)
    assert response.status_code == 200, response.text
    return len(response.json()["items"])


async def test_a_user_past_the_stream_cap_gets_429_with_retry_after_and_nothing_starts(
    http: httpx.AsyncClient, make_tenant: Any, stream_cap: int, raw: Redis
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(text_then_tool(rounds=0)) as (model, _):
        run = await start_run(http, headers, model)
        assert (await read_events(http, run["events_url"], headers))[-1].type == "RUN_FINISHED"  # model still here
    chats_before = await chat_count(http, headers)
    async with AsyncExitStack() as held:
        for _ in range(stream_cap):
            await held.enter_async_context(open_feed(http, headers))
        refused = await http.get(run["events_url"], headers=headers)
        assert refused.status_code == 429, refused.text
        assert refused.json()["code"] == "too_many_streams"
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        agui = await http.post("/api/v1/agui/default", json=agui_body(), headers=headers)
        assert (agui.status_code, agui.json()["code"]) == (429, "too_many_streams")
        assert await chat_count(http, headers) == chats_before, "a refused AG-UI request stored a chat"
        messages = f"/api/v1/chats/{run['chat_id']}/messages"
        transcript = (await http.get(messages, headers=headers)).json()
        streamed = await http.post(
            f"/api/v1/chats/{run['chat_id']}/runs/stream", json={"message": "again", "mode": "inline"}, headers=headers
        )
        assert (streamed.status_code, streamed.json()["code"]) == (429, "too_many_streams")
        assert (await http.get(messages, headers=headers)).json() == transcript, "a refused run was stored"
        # The cap is per user: someone else streams as usual.
        other = auth_headers(make_tenant())
        async with open_feed(http, other):
            pass
    await wait_for_slots(raw, stream_slots(tenant.user_id), 0)
    events = await read_events(http, run["events_url"], headers)
    assert events[-1].type == "RUN_FINISHED"


async def test_a_finished_stream_gives_its_slot_back_at_once(
    http: httpx.AsyncClient, make_tenant: Any, stream_cap: int, raw: Redis
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(text_then_tool(rounds=0)) as (model, _):
        run = await start_run(http, headers, model)
        assert (await read_events(http, run["events_url"], headers))[-1].type == "RUN_FINISHED"  # model still here
    for _ in range(stream_cap * 3):  # far more streams than the cap, one after another
        assert (await read_events(http, run["events_url"], headers))[-1].type == "RUN_FINISHED"
        assert await raw.zcard(stream_slots(tenant.user_id)) == 0


async def test_slots_of_a_relay_that_died_lapse_with_their_lease(
    http: httpx.AsyncClient, make_tenant: Any, stream_cap: int, raw: Redis
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    key = stream_slots(tenant.user_id)
    now_ms = int(time.time() * 1000)
    # Two relays took slots for this user and were killed: nobody will ever release them.
    await raw.zadd(key, {"killed-relay-1": now_ms + 60_000, "killed-relay-2": now_ms + 60_000})
    refused = await http.get("/api/v1/feed", headers=headers)
    assert (refused.status_code, refused.json()["code"]) == (429, "too_many_streams")
    # Their leases end (no heartbeat renewed them): the user streams again without anyone cleaning up.
    await raw.zadd(key, {"killed-relay-1": now_ms - 1, "killed-relay-2": now_ms - 1})
    async with open_feed(http, headers):
        held = [str(member) for member in await raw.zrange(key, 0, -1)]
        assert len(held) == 1 and not held[0].startswith("killed-relay")


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture(scope="module")
def logged_stream_app(stack: object) -> Iterator[tuple[str, _Records]]:
    """The stream function's app under uvicorn with the access log on, and what that log wrote."""
    from personal_agent.stream_app import create_stream_app

    records = _Records()
    access = logging.getLogger("uvicorn.access")
    access.addHandler(records)
    access.setLevel(logging.INFO)
    port = free_port()
    config = uvicorn.Config(
        create_stream_app(), host="127.0.0.1", port=port, log_config=None, access_log=True, lifespan="on"
    )
    server = ReadyServer(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    try:
        assert server.ready.wait(30), "the stream app did not start"
        yield f"http://127.0.0.1:{port}", records
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        access.removeHandler(records)


async def test_a_token_in_the_url_opens_a_get_stream_and_is_never_logged(
    make_tenant: Any, logged_stream_app: tuple[str, _Records]
) -> None:
    url, records = logged_stream_app
    tenant = make_tenant()
    token = dev_issuer().mint(subject=tenant.subject, orgs=[tenant.slug], roles=("user",))
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        async with client.stream("GET", "/api/v1/feed", params={"access_token": token, "after": "0"}) as response:
            assert response.status_code == 200
        bad = await client.get("/api/v1/feed", params={"access_token": "not-a-valid-token-xyz"})
        assert bad.status_code == 401
    logged = "\n".join(records.lines)
    assert "/api/v1/feed?after=0" in logged, logged  # the access log ran, and kept the other parameters
    assert token not in logged and "not-a-valid-token-xyz" not in logged and "access_token" not in logged


async def test_a_token_in_the_url_of_a_post_is_refused_and_never_logged(
    make_tenant: Any, logged_stream_app: tuple[str, _Records]
) -> None:
    url, records = logged_stream_app
    tenant = make_tenant()
    headers = auth_headers(tenant)
    token = headers["Authorization"].removeprefix("Bearer ")
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        for extra in ({}, headers):  # with or without a header, the URL token is refused
            response = await client.post(
                "/api/v1/agui/default", params={"access_token": token}, json=agui_body(), headers=extra
            )
            assert (response.status_code, response.json()["code"]) == (400, "token_in_query"), response.text
    assert token not in "\n".join(records.lines)
    assert any("/api/v1/agui/default" in line and "400" in line for line in records.lines)


async def test_agui_ids_are_bounded_and_a_refused_input_stores_nothing(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    headers = auth_headers(make_tenant())
    for body, code in (
        (agui_body(thread_id="t" * 10_000), "invalid_thread_id"),
        (agui_body(thread_id=""), "invalid_thread_id"),
        (agui_body(run_id="r" * 10_000), "invalid_run_id"),
    ):
        response = await http.post("/api/v1/agui/default", json=body, headers=headers)
        assert response.status_code == 422, response.text
        assert response.json()["code"] == code
    assert await chat_count(http, headers) == 0
