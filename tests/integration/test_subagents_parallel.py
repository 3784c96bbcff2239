"""Sub-agents run in parallel: three children of one response, taking 1, 2 and 3 s, overlap (by their own
start and finish times) inline and durable, and the parent's event sequence is the same on both drivers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from tests.auth import auth_headers
from tests.scripted import scripted_model
from tests.sse import Frame, read_events
from tests.subagents import delegating, normalized, run_rows, sleepers


async def _delegate_three(http: httpx.AsyncClient, tenant: Any, model: str, mode: str) -> tuple[Any, list[Frame]]:
    headers = auth_headers(tenant)
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    spec = await launch_run(
        LaunchRequest(
            org_id=tenant.org_id,
            user_id=tenant.user_id,
            chat_id=chat["id"],
            message="split this in three",
            model=model,
            mode=mode,  # type: ignore[arg-type]
            tools=("delegate", "current_time"),
        )
    )
    frames = await read_events(http, f"/api/v1/runs/{spec.run_id}/events", headers, timeout=60)
    return spec, frames


def _overlapping(children: list[dict[str, Any]]) -> None:
    """Every child started before any finished: they ran at the same time (their own records say so)."""
    assert [c["status"] for c in children] == ["succeeded"] * 3
    assert max(c["started_at"] for c in children) < min(c["finished_at"] for c in children)


async def test_three_children_run_together_with_the_same_parent_events_on_both_drivers(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(delegating(sleepers(1, 2, 3))) as (model, _):
        inline, inline_frames = await _delegate_three(http, tenant, model, "inline")
        durable, durable_frames = await _delegate_three(http, tenant, model, "durable")
    for spec, frames in ((inline, inline_frames), (durable, durable_frames)):
        assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
        children = run_rows(admin_url, spec.run_id)
        _overlapping(children)
        assert {c["spec"]["mode"] for c in children} == {spec.mode}
        started = [f.data["value"] for f in frames if f.data.get("name") == "subagent_started"]
        finished = [f.data["value"] for f in frames if f.data.get("name") == "subagent_finished"]
        assert [s["child_run_id"] for s in started] == [str(c["id"]) for c in children]
        assert [f["answer"].strip().split()[-1] for f in finished] == ["1", "2", "3"]  # in the order they ended
        text = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
        assert text.startswith("Delegating.Children said: ") and all(f"slept {n}" in text for n in (1, 2, 3))
        view = (await http.get(f"/api/v1/runs/{spec.run_id}", headers=headers)).json()
        assert [(c["id"], c["status"], c["task"]) for c in view["children"]] == [
            (str(c["id"]), "succeeded", c["spec"]["delegation"]["task"]) for c in children
        ]
        child_stream = await read_events(http, started[0]["events_url"], headers)
        assert child_stream[0].type == "RUN_STARTED" and child_stream[-1].type == "RUN_FINISHED"
    assert normalized(durable_frames) == normalized(inline_frames)


@pytest.fixture
def concurrency_two() -> Iterator[None]:
    """PA_SUBAGENT_CONCURRENCY=2 for the rest of the test."""
    from personal_agent.settings import get_settings

    os.environ["PA_SUBAGENT_CONCURRENCY"] = "2"
    get_settings.cache_clear()
    yield
    os.environ.pop("PA_SUBAGENT_CONCURRENCY", None)
    get_settings.cache_clear()


async def test_an_inline_worker_runs_at_most_its_concurrency_of_children_at_once(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, concurrency_two: None
) -> None:
    with scripted_model(delegating(sleepers(1, 1, 1))) as (model, _):
        spec, frames = await _delegate_three(http, make_tenant(), model, "inline")
    assert frames[-1].type == "RUN_FINISHED"
    children = run_rows(admin_url, spec.run_id)
    assert [c["status"] for c in children] == ["succeeded"] * 3
    # From their own records: never three at once, and the third started only after one of the first two ended.
    first, second, third = sorted(children, key=lambda c: c["started_at"])
    assert first["started_at"] < second["finished_at"] and second["started_at"] < first["finished_at"]
    assert third["started_at"] >= min(first["finished_at"], second["finished_at"])
