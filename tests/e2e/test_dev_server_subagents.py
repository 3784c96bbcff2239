"""Delegation on `pa dev` as a user runs it (the `pa` console script, HTTP only, the offline demo model): a
`/tool delegate {...}` turn starts an `explore` sub-agent, inline and durable; the parent's stream carries the
sub-agent's events, the child's own stream ends, and the run view lists the child with its status and cost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import running_pa_dev


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-subagents")) as server:
        yield server.url, server.auth


def _follow(http: httpx.Client, url: str) -> list[dict[str, Any]]:
    with http.stream("GET", url) as stream:
        assert stream.status_code == 200
        return [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("mode", ["inline", "durable"])
def test_the_demo_model_delegates_to_an_explore_sub_agent_on_pa_dev(dev: tuple[str, dict[str, str]], mode: str) -> None:
    url, auth = dev
    command = '/tool delegate {"task": "what time is it?", "preset": "explore"}'
    with httpx.Client(base_url=url, headers=auth, timeout=60) as http:
        chat = http.post("/api/v1/chats", json={"title": "delegation"}).json()
        started = http.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": command, "mode": mode})
        assert started.status_code == 202, started.text
        events = _follow(http, started.json()["events_url"])
        run = http.get(started.json()["status_url"]).json()
        names = [e.get("name") for e in events if e["type"] == "CUSTOM"]
        assert "subagent_started" in names and "subagent_finished" in names
        begun = next(e["value"] for e in events if e.get("name") == "subagent_started")
        assert begun["preset"] == "explore" and "delegate" not in begun["tools"] and begun["tools"]
        child_events = _follow(http, begun["events_url"])
        chats = http.get("/api/v1/chats").json()["items"]
    assert events[-1]["type"] == "RUN_FINISHED" and child_events[-1]["type"] == "RUN_FINISHED"
    assert any(e["type"] == "TOOL_CALL_START" and e["toolCallName"] == "current_time" for e in child_events)
    answer = "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert "`delegate` returned:" in answer and "offline demo model" in answer
    assert (run["status"], run["mode"]) == ("succeeded", mode)
    assert [(c["id"], c["status"], c["task"]) for c in run["children"]] == [
        (begun["child_run_id"], "succeeded", "what time is it?")
    ]
    assert [c["id"] for c in chats].count(chat["id"]) == 1  # the sub-agent is no chat of its own
