"""What a developer sees of a demo run on `pa dev`, over HTTP only: the run names the model that answered as it names
the model it asked for, says it had no routing model (not that routing failed), the usage CSV gives the provider
and a zero cost as `0`; and a chat's first exchange names the chat (offline, by the demo model), unless a person
named it first."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer

DEMO = "offline:demo"


def _turn(http: httpx.Client, chat_id: str, message: str, **body: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Start a run, follow its events to the end; the events and the run's view."""
    started = http.post(f"/api/v1/chats/{chat_id}/runs", json={"message": message, "model": DEMO, **body})
    assert started.status_code == 202, started.text
    events: list[dict[str, Any]] = []
    with http.stream("GET", started.json()["events_url"]) as stream:
        assert stream.status_code == 200
        events = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
    return events, http.get(started.json()["status_url"]).json()


def _titles(http: httpx.Client) -> dict[str, str]:
    return {c["id"]: c["title"] for c in http.get("/api/v1/chats").json()["items"]}


@pytest.mark.timeout(240)
def test_a_demo_run_reads_plainly_and_titles_its_chat(dev_server: DevServer) -> None:
    with httpx.Client(base_url=dev_server.url, headers=dev_server.auth, timeout=60) as http:
        chat = http.post("/api/v1/chats", json={}).json()
        assert chat["title"] == "New chat"
        events, run = _turn(http, chat["id"], "Remember that I prefer metric units.")
        assert events[-1]["type"] == "RUN_FINISHED" and run["status"] == "succeeded"
        assert [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"] == ["remember"]

        # The model it asked for and the model that answered, named alike; no routing model is no failure.
        assert run["model"] == DEMO and run["answered_model"] == DEMO
        assert run["routing"] is None
        assert run["cost_usd"] == 0

        # The chat list shows the title the demo model made of the first exchange; a second turn keeps it.
        assert _titles(http)[chat["id"]] == "Remember: I prefer metric units"
        _turn(http, chat["id"], "What time is it?")
        assert _titles(http)[chat["id"]] == "Remember: I prefer metric units"

        # A title a person gave is kept.
        named = http.post("/api/v1/chats", json={"title": "Trip to Lisbon"}).json()
        _turn(http, named["id"], "What time is it?")
        assert _titles(http)[named["id"]] == "Trip to Lisbon"

        exported = http.get("/api/v1/usage/export")
        assert exported.status_code == 200, exported.text
    rows = [r for r in csv.DictReader(io.StringIO(exported.text)) if r["run_id"] == run["id"]]
    assert len(rows) == 2  # the tool call, then the answer
    assert {r["provider"] for r in rows} == {"offline"}
    assert {r["cost_usd"] for r in rows} == {"0"}  # not `0E-8`
