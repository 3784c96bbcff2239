"""Follow-ups while a run is active (issue 33, item 2) on `pa dev` as a user runs it: two messages sent 50 ms apart
to one chat, under each of the chat's policies. The demo model quotes the message back word by word (here 40 ms a
word), so the first run is still streaming when the second message arrives.

- `reject`: the second is 409 `run_in_progress`; only the first is answered.
- `enqueue` (the default): the second is 202 `followup_queued`, shows as queued in the transcript, and runs when the
  first ends: two runs, in order, both in the transcript. A queued message can be cancelled before it starts.
- `interrupt`: the first run ends `cancelled` with its partial answer stored, then the second is answered."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.pa_dev import DevServer, running_pa_dev

WORDS = " ".join(f"word{i}" for i in range(60))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-followups"), env_extra={"PA_DEMO_DELAY_MS": "40"}) as dev:
        yield dev


def _ended(feed: FeedListener, run_ids: set[str], timeout: float = 120) -> dict[str, str]:
    """Wait on the feed until each of `run_ids` ended: run id -> status, in the order they ended."""
    ended: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while not run_ids <= ended.keys():
        try:
            event = feed.events.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"runs did not end: {run_ids - ended.keys()} (ended: {ended})") from None
        if event.get("name") == "run_finished" and event["value"]["run_id"] in run_ids:
            ended[event["value"]["run_id"]] = event["value"]["status"]
    return ended


def _two_messages(http: httpx.Client, chat_id: str, policy: str | None) -> tuple[httpx.Response, httpx.Response]:
    if policy is not None:
        set_to = http.put(f"/api/v1/chats/{chat_id}/followup-policy", json={"policy": policy})
        assert set_to.status_code == 200 and set_to.json() == {"policy": policy}, set_to.text
    first = http.post(f"/api/v1/chats/{chat_id}/runs", json={"message": f"first {WORDS}", "model": "offline:demo"})
    time.sleep(0.05)  # the scenario: a second message 50 ms after the first (not a wait for anything)
    second = http.post(f"/api/v1/chats/{chat_id}/runs", json={"message": "second please", "model": "offline:demo"})
    assert first.status_code == 202, first.text
    return first, second


def _transcript(http: httpx.Client, chat_id: str) -> dict[str, Any]:
    page = http.get(f"/api/v1/chats/{chat_id}/messages")
    assert page.status_code == 200, page.text
    return dict(page.json())


def _texts(page: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item["role"], item.get("text") or "") for item in page["items"] if item["role"] in ("user", "assistant")]


@pytest.mark.timeout(300)
def test_reject_answers_the_second_message_409(server: DevServer) -> None:
    with (
        httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http,
        FeedListener(server.url, server.auth) as feed,
    ):
        chat = http.post("/api/v1/chats", json={"title": "reject"}).json()
        first, second = _two_messages(http, chat["id"], "reject")
        assert (second.status_code, second.json()["code"]) == (409, "run_in_progress"), second.text
        assert second.json()["details"]["run_id"] == first.json()["run_id"]
        assert _ended(feed, {first.json()["run_id"]}) == {first.json()["run_id"]: "succeeded"}
        page = _transcript(http, chat["id"])
    assert [role for role, _ in _texts(page)] == ["user", "assistant"] and page["queued"] == []


@pytest.mark.timeout(300)
def test_enqueue_runs_the_second_message_after_the_first_in_order(server: DevServer) -> None:
    with (
        httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http,
        FeedListener(server.url, server.auth) as feed,
    ):
        chat = http.post("/api/v1/chats", json={"title": "enqueue"}).json()
        assert http.get(f"/api/v1/chats/{chat['id']}/followup-policy").json() == {"policy": "enqueue"}  # default
        first, second = _two_messages(http, chat["id"], None)
        assert (second.status_code, second.json()["code"]) == (202, "followup_queued"), second.text
        queued = second.json()["details"]
        assert (queued["position"], queued["policy"]) == (1, "enqueue")
        while_first_runs = _transcript(http, chat["id"])  # the first is streaming: the second shows as queued
        assert [(q["id"], q["message"]) for q in while_first_runs["queued"]] == [
            (queued["followup_id"], "second please")
        ]
        ended = _ended(feed, {first.json()["run_id"], queued["run_id"]})
        page = _transcript(http, chat["id"])
        second_run = http.get(f"/api/v1/runs/{queued['run_id']}").json()

    assert list(ended.items()) == [(first.json()["run_id"], "succeeded"), (queued["run_id"], "succeeded")]
    texts = _texts(page)
    assert [role for role, _ in texts] == ["user", "assistant", "user", "assistant"]
    assert texts[0][1].startswith("first") and texts[2][1] == "second please" and "second please" in texts[3][1]
    assert page["queued"] == [] and second_run["status"] == "succeeded"


@pytest.mark.timeout(300)
def test_a_queued_message_can_be_cancelled_before_it_starts(server: DevServer) -> None:
    with (
        httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http,
        FeedListener(server.url, server.auth) as feed,
    ):
        chat = http.post("/api/v1/chats", json={"title": "cancel a queued one"}).json()
        first, second = _two_messages(http, chat["id"], "enqueue")
        queued = second.json()["details"]
        other = server.auth_for("mallory", "user")
        stolen = http.delete(f"/api/v1/chats/{chat['id']}/followups/{queued['followup_id']}", headers=other)
        assert (stolen.status_code, stolen.json()["code"]) == (404, "chat_not_found")
        cancelled = http.delete(f"/api/v1/chats/{chat['id']}/followups/{queued['followup_id']}")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled", cancelled.text
        again = http.delete(f"/api/v1/chats/{chat['id']}/followups/{queued['followup_id']}")
        assert (again.status_code, again.json()["code"]) == (409, "followup_not_queued")
        assert _ended(feed, {first.json()["run_id"]}) == {first.json()["run_id"]: "succeeded"}
        page = _transcript(http, chat["id"])
        never = http.get(f"/api/v1/runs/{queued['run_id']}")
    assert [role for role, _ in _texts(page)] == ["user", "assistant"] and page["queued"] == []
    assert never.status_code == 404


@pytest.mark.timeout(300)
def test_interrupt_stops_the_first_run_with_its_partial_answer_and_answers_the_second(server: DevServer) -> None:
    with (
        httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http,
        FeedListener(server.url, server.auth) as feed,
    ):
        chat = http.post("/api/v1/chats", json={"title": "interrupt"}).json()
        first, second = _two_messages(http, chat["id"], "interrupt")
        assert (second.status_code, second.json()["code"]) == (202, "followup_queued"), second.text
        queued = second.json()["details"]
        ended = _ended(feed, {first.json()["run_id"], queued["run_id"]})
        page = _transcript(http, chat["id"])

    assert list(ended.items()) == [(first.json()["run_id"], "cancelled"), (queued["run_id"], "succeeded")]
    texts = _texts(page)
    assert [role for role, _ in texts] == ["user", "assistant", "user", "assistant"]
    partial = texts[1][1]
    assert partial and "word59" not in partial  # what it had streamed when it stopped, not the whole answer
    assert texts[2][1] == "second please" and "second please" in texts[3][1]
    runs = {run["id"]: run["status"] for run in page["runs"]}
    assert runs == {first.json()["run_id"]: "cancelled", queued["run_id"]: "succeeded"}
