"""One stream entry per batch of events, exact resume kept (issue 35): a run's deltas land as a few entries holding
many events each, every event still has an id of its own (`<entry id>.<index>`, the entry id for the last event of
an entry), and a client cut at ANY event, inside a batch's entry or between two, gets exactly the rest, on both bus
backends (Valkey over TCP, and Upstash REST through the test bridge) and through the shared tail or an own XREAD."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from personal_agent.bus import entry_ids, reset_bus
from personal_agent.bus.key_names import run_stream
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.runs import start_run
from tests.scripted import many_chunks, scripted_model
from tests.sse import Frame, read_events
from tests.upstash_bridge import running_bridge

pytestmark = pytest.mark.timeout(300)
TOKEN = f"test-upstash-token-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def bridge_url(stack: object) -> Iterator[str]:
    with running_bridge(os.environ["REDIS_URL"], TOKEN) as url:
        yield url


@pytest.fixture(params=["valkey", "upstash"])
async def backend(
    request: pytest.FixtureRequest, bridge_url: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[str]:
    """The app's bus for this test: the embedded Valkey, or Upstash REST (the bridge in front of the same Valkey)."""
    await reset_bus()
    if request.param == "upstash":
        monkeypatch.setenv("UPSTASH_REDIS_REST_URL", bridge_url)
        monkeypatch.setenv("UPSTASH_REDIS_REST_TOKEN", TOKEN)
    get_settings.cache_clear()
    try:
        yield request.param
    finally:
        await reset_bus()
        monkeypatch.undo()
        get_settings.cache_clear()


async def _entries(org_id: Any, run_id: str) -> list[tuple[str, dict[str, str]]]:
    raw = Redis.from_url(os.environ["REDIS_URL"], decode_responses=True)
    try:
        return list(await raw.xrange(run_stream(org_id, run_id)))
    finally:
        await raw.aclose()


async def _a_batched_run(http: httpx.AsyncClient, tenant: Any, deltas: int) -> tuple[dict[str, Any], list[Frame]]:
    headers = auth_headers(tenant)
    with scripted_model(many_chunks(deltas)) as (model, _):
        run = await start_run(http, headers, model)
        full = await read_events(http, run["events_url"], headers)
    assert full[-1].type == "RUN_FINISHED"
    assert [f.data["delta"] for f in full if f.type == "TEXT_MESSAGE_CONTENT"] == [f"c{i} " for i in range(deltas)]
    return run, full


@pytest.mark.parametrize("fanout", [True, False], ids=["shared-tail", "own-xread"])
async def test_every_cut_point_inside_and_between_batch_entries_resumes_exactly(
    http: httpx.AsyncClient, make_tenant: Any, backend: str, fanout: bool
) -> None:
    get_settings().sse_fanout = fanout
    tenant = make_tenant()
    headers = auth_headers(tenant)
    run, full = await _a_batched_run(http, tenant, deltas=60)
    entries = await _entries(tenant.org_id, run["run_id"])
    # The layout: fewer entries than events, entries holding several events, and one distinct, ordered id per event.
    sizes = [len(fields["d"].split("\n")) for _id, fields in entries]
    assert sum(sizes) == len(full) and len(entries) < len(full) and max(sizes) > 1, sizes
    ids = [f.id or "" for f in full]
    keys = [entry_ids.key(i) for i in ids]
    assert keys == sorted(keys) and len(set(ids)) == len(ids)
    assert [i for i in ids if not entry_ids.inside(i)] == [entry_id for entry_id, _ in entries]
    inside = [k for k in range(1, len(full)) if entry_ids.inside(ids[k - 1])]
    assert inside, "some cut points fall inside a batch's entry"
    for k in range(1, len(full) + 1):  # every cut point: inside an entry, between two, after the last event
        head = await read_events(http, run["events_url"], headers, limit=k)
        assert head == full[:k]
        rest = await read_events(http, run["events_url"], headers, last_event_id=head[-1].id)
        assert rest == full[k:], f"cut at {k} (after {head[-1].id}, {backend})"
    after = await read_events(http, f"{run['events_url']}?after={ids[inside[0] - 1]}", headers)
    assert after == full[inside[0] :]


async def test_a_malformed_event_id_is_a_clear_422(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    run, full = await _a_batched_run(http, tenant, deltas=5)
    for bad in ("1-2.", "1-2.x", "1-2.3.4", ".3", "1.3", "1-2-3"):
        answer = await http.get(run["events_url"], headers={**headers, "Last-Event-ID": bad})
        assert (answer.status_code, answer.json()["code"]) == (422, "invalid_last_event_id"), bad
        assert "1712345678901-0.3" in answer.json()["message"]


async def test_a_resume_point_inside_an_entry_no_longer_kept_gets_resume_expired(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    run, full = await _a_batched_run(http, tenant, deltas=60)
    inside = next(f.id for f in full if f.id and entry_ids.inside(f.id))
    raw = Redis.from_url(os.environ["REDIS_URL"], decode_responses=True)
    try:  # the oldest entries are trimmed away (MAXLEN), the one holding `inside` among them
        stream = run_stream(tenant.org_id, run["run_id"])
        await raw.xtrim(stream, minid=entry_ids.key(entry_ids.entry_of(inside))[0] + 1)
        assert await raw.xlen(stream) > 0
    finally:
        await raw.aclose()
    frames = await read_events(http, run["events_url"], headers, last_event_id=inside)
    assert [(f.type, f.data.get("name"), f.data.get("value", {}).get("after")) for f in frames] == [
        ("CUSTOM", "resume_expired", inside)
    ]
