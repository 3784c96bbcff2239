"""Slack in (issue 34) on `pa dev` as a user runs it, against a fake Slack Web API on loopback that `slack_sdk`'s
client talks to (`PA_SLACK_API_URL`), with requests signed as Slack signs them: an unlinked user's mention gets the
connect reply only; once linked, a mention runs the agent (`trigger_source` slack, trusted) and the answer lands in
the thread; an approval button click resumes the run; a forged, stale or replayed signature is a 401 that starts
nothing."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from tests.channel_fakes import FakeSlack, running_fake_slack, slack_headers
from tests.e2e.pa_dev import DevServer, running_pa_dev

TEAM, SECRET, TOKEN = "T0TEST", "slack-signing-secret-for-tests", "xoxb-test-token"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeSlack]]:
    with running_fake_slack() as slack:
        env = {"PA_SLACK_API_URL": slack.base_url}
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-slack"), env_extra=env) as server:
            admin = server.auth_for("boss", "org-admin")
            body = {"team_id": TEAM, "bot_token": TOKEN, "signing_secret": SECRET}
            put = httpx.put(f"{server.url}/api/v1/admin/channels/slack", json=body, headers=admin, timeout=30)
            assert put.status_code == 200, put.text
            assert put.json()["secrets_set"] == ["bot_token", "signing_secret"] and SECRET not in put.text
            yield server, slack


def _mention(ts: str, text: str, user: str = "U0ALICE") -> bytes:
    event = {"type": "app_mention", "user": user, "text": f"<@U0BOT> {text}", "ts": ts, "channel": "C0GENERAL"}
    payload = {"token": "x", "team_id": TEAM, "type": "event_callback", "event_id": f"Ev{ts}", "event": event}
    return json.dumps(payload).encode()


def _send(http: httpx.Client, path: str, body: bytes, headers: dict[str, str], content_type: str) -> httpx.Response:
    return http.post(f"/api/v1/channels/slack/{path}", content=body, headers={**headers, "Content-Type": content_type})


def _event(http: httpx.Client, body: bytes) -> httpx.Response:
    return _send(http, "events", body, slack_headers(SECRET, body), "application/json")


def _in_thread(slack: FakeSlack, thread: str) -> list[dict[str, Any]]:
    """The messages posted in the thread, and the updates of them (an update names the message by its `ts`)."""
    posted = [p for m, p in list(slack.calls) if m == "chat.postMessage" and p.get("thread_ts") == thread]
    mine = {f"1700000000.{i:06d}" for i in _posted_numbers(slack, thread)}
    return posted + [p for m, p in list(slack.calls) if m == "chat.update" and p.get("ts") in mine]


def _posted_numbers(slack: FakeSlack, thread: str) -> list[int]:
    """The fake numbers its posts in order: the n-th `chat.postMessage` got ts `1700000000.{n:06d}`."""
    posts = [p for m, p in list(slack.calls) if m == "chat.postMessage"]
    return [i + 1 for i, p in enumerate(posts) if p.get("thread_ts") == thread]


def _link(http: httpx.Client, server: DevServer, slack: FakeSlack, user: str) -> None:
    """An unlinked user's mention: the connect reply with a code, nothing run; the member confirms the code."""
    runs_before = http.get("/api/v1/runs", headers=server.auth).json()["items"]
    assert _event(http, _mention("1700000001.000100", "hello", user)).status_code == 200
    slack.wait_for(lambda calls: any(p.get("thread_ts") == "1700000001.000100" for _, p in calls))
    (reply,) = _in_thread(slack, "1700000001.000100")
    assert reply["_token"] == TOKEN and reply["channel"] == "C0GENERAL"
    code = re.search(r"\b([A-Z2-9]{8})\b", reply["text"])
    assert code is not None and "Connect your account" in reply["text"], reply
    assert http.get("/api/v1/runs", headers=server.auth).json()["items"] == runs_before  # nothing ran
    linked = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth)
    assert linked.status_code == 201, linked.text
    assert linked.json()["kind"] == "slack" and linked.json()["external_id"] == user
    again = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth)
    assert (again.status_code, again.json()["code"]) == (404, "link_code_invalid")  # once only


def _run_of_chat(http: httpx.Client, server: DevServer, text: str) -> dict[str, Any]:
    for run in http.get("/api/v1/runs", headers=server.auth).json()["items"]:
        chat = http.get(f"/api/v1/chats/{run['chat_id']}", headers=server.auth).json()
        if chat["title"].startswith(text):
            return {**run, "chat": chat}
    raise AssertionError(f"no run for {text!r}")


@pytest.mark.timeout(300)
def test_a_mention_runs_the_agent_and_the_answer_lands_in_the_thread(world: tuple[DevServer, FakeSlack]) -> None:
    server, slack = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _link(http, server, slack, "U0ALICE")
        thread = "1700000002.000200"
        started = time.monotonic()
        assert _event(http, _mention(thread, "what time is it?")).status_code == 200
        ack = time.monotonic() - started
        slack.wait_for(lambda calls: any("The time is" in str(p.get("text")) for p in _in_thread(slack, thread)))
        run = _run_of_chat(http, server, "what time is it?")
        assert run["trigger_source"] == "slack" and run["status"] == "succeeded", run
        # Slack retries an event it thinks was missed: the same event id starts nothing more.
        assert _event(http, _mention(thread, "what time is it?")).status_code == 200
        runs = http.get("/api/v1/runs", headers=server.auth).json()["items"]
        assert [r["id"] for r in runs if r["chat_id"] == run["chat_id"]] == [run["id"]]
    assert ack < 3.0  # Slack's limit: the figure itself is bench/channel_ack.py's


@pytest.mark.timeout(300)
def test_an_approval_button_resumes_the_run(world: tuple[DevServer, FakeSlack]) -> None:
    server, slack = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        if not http.get("/api/v1/me/channel-links", headers=server.auth).json():
            _link(http, server, slack, "U0ALICE")
        thread = "1700000003.000300"
        assert _event(http, _mention(thread, "send hello to team@example.com")).status_code == 200
        slack.wait_for(lambda calls: any(p.get("blocks") for p in _in_thread(slack, thread)))
        (asked,) = [p for p in _in_thread(slack, thread) if p.get("blocks")]
        blocks = json.loads(asked["blocks"]) if isinstance(asked["blocks"], str) else asked["blocks"]
        approve = blocks[1]["elements"][0]
        assert approve["action_id"] == "approve"
        payload = {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": "U0ALICE"},
            "channel": {"id": "C0GENERAL"},
            "message": {"ts": "1700000003.000400", "thread_ts": thread},
            "actions": [{"action_id": "approve", "value": approve["value"], "type": "button"}],
        }
        body = urlencode({"payload": json.dumps(payload)}).encode()
        clicked = _send(http, "interactions", body, slack_headers(SECRET, body), "application/x-www-form-urlencoded")
        assert clicked.status_code == 200, clicked.text
        slack.wait_for(lambda calls: any("Approved by" in str(p.get("text")) for p in _in_thread(slack, thread)))
        deadline = time.monotonic() + 60
        while (run := _run_of_chat(http, server, "send hello"))["status"] not in ("succeeded", "failed"):
            assert time.monotonic() < deadline, run
            seen = len(slack.calls)
            slack.wait_for(lambda calls, seen=seen: len(calls) > seen, timeout=30)
        assert run["status"] == "succeeded", run
        approved = http.get("/api/v1/approvals", params={"status": "approved"}, headers=server.auth).json()["items"]
        assert approve["value"] in {a["id"] for a in approved}


@pytest.mark.timeout(300)
def test_forged_stale_and_replayed_signatures_are_refused_and_start_nothing(world: tuple[DevServer, FakeSlack]) -> None:
    server, slack = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        runs_before = http.get("/api/v1/runs", headers=server.auth).json()["items"]
        calls_before = len(slack.calls)
        body = _mention("1700000009.000900", "what time is it?")
        forged = _send(http, "events", body, slack_headers("not-the-secret", body), "application/json")
        stale = _send(http, "events", body, slack_headers(SECRET, body, int(time.time()) - 6 * 60), "application/json")
        unsigned = _send(http, "events", body, {}, "application/json")
        for response in (forged, stale, unsigned):
            assert (response.status_code, response.json()["code"]) == (401, "signature_invalid"), response.text
        headers = slack_headers(SECRET, body)
        assert _send(http, "events", body, headers, "application/json").status_code == 200
        replayed = _send(http, "events", body, headers, "application/json")
        assert (replayed.status_code, replayed.json()["code"]) == (401, "signature_replayed")
        slack.wait_for(lambda calls: any(p.get("thread_ts") == "1700000009.000900" for _, p in calls))
        slack.wait_for(
            lambda calls: any("The time is" in str(p.get("text")) for p in _in_thread(slack, "1700000009.000900"))
        )
        runs = http.get("/api/v1/runs", headers=server.auth).json()["items"]
        assert len(runs) == len(runs_before) + 1  # the one signed request, once
        assert len(slack.calls) > calls_before


@pytest.mark.timeout(300)
def test_url_verification_and_the_slash_command(world: tuple[DevServer, FakeSlack]) -> None:
    server, slack = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        check = json.dumps({"token": "x", "challenge": "c-123", "type": "url_verification"}).encode()
        assert _event(http, check).json() == {"challenge": "c-123", "ok": True}
        forged = _send(http, "events", check, slack_headers("not-the-secret", check), "application/json")
        assert (forged.status_code, forged.json()["code"]) == (401, "signature_invalid")

        if not http.get("/api/v1/me/channel-links", headers=server.auth).json():
            _link(http, server, slack, "U0ALICE")
        form = {"team_id": TEAM, "user_id": "U0ALICE", "channel_id": "C0CMD", "text": "what time is it?"}
        body = urlencode({**form, "command": "/agent", "trigger_id": "trig-1"}).encode()
        answered = _send(http, "commands", body, slack_headers(SECRET, body), "application/x-www-form-urlencoded")
        assert answered.status_code == 200 and answered.json()["response_type"] == "ephemeral", answered.text
        slack.wait_for(
            lambda calls: any(p.get("channel") == "C0CMD" and "The time is" in str(p.get("text")) for _, p in calls)
        )
        first = next(p for m, p in slack.calls if m == "chat.postMessage" and p.get("channel") == "C0CMD")
        assert "thread_ts" not in first  # the first answer starts the thread under the command

        admin = server.auth_for("boss", "org-admin")
        log = http.get("/api/v1/admin/channels/slack/events", headers=admin).json()
        assert {e["status"] for e in log} >= {"unlinked", "started"} and not any(
            e["event_id"].startswith("sig:") for e in log
        )
        assert http.get("/api/v1/admin/channels/slack/events", headers=server.auth).status_code == 403  # admins only


def _interaction(http: httpx.Client, payload: dict[str, Any], secret: str = SECRET) -> httpx.Response:
    body = urlencode({"payload": json.dumps(payload)}).encode()
    return _send(http, "interactions", body, slack_headers(secret, body), "application/x-www-form-urlencoded")


def _submission(view: dict[str, Any], user: str, reason: str) -> dict[str, Any]:
    """The `view_submission` Slack posts when the person submits the modal: the view with its input's state."""
    state = {"values": {"reason": {"reason": {"type": "plain_text_input", "value": reason}}}}
    submitted = {**view, "id": "V1", "team_id": TEAM, "state": state}
    return {"type": "view_submission", "team": {"id": TEAM}, "user": {"id": user}, "view": submitted}


@pytest.mark.timeout(300)
def test_deny_opens_a_modal_and_its_submission_denies_with_the_reason(world: tuple[DevServer, FakeSlack]) -> None:
    server, slack = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        if not http.get("/api/v1/me/channel-links", headers=server.auth).json():
            _link(http, server, slack, "U0ALICE")
        thread = "1700000005.000500"
        assert _event(http, _mention(thread, "send hello to team@example.com")).status_code == 200
        slack.wait_for(lambda calls: any(p.get("blocks") for p in _in_thread(slack, thread)))
        (asked,) = [p for p in _in_thread(slack, thread) if p.get("blocks")]
        blocks = json.loads(asked["blocks"]) if isinstance(asked["blocks"], str) else asked["blocks"]
        deny = blocks[1]["elements"][1]
        assert deny["action_id"] == "deny"
        click = {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": "U0ALICE"},
            "channel": {"id": "C0GENERAL"},
            "trigger_id": "trig-deny-1",
            "message": {"ts": "1700000005.000600", "thread_ts": thread},
            "actions": [{"action_id": "deny", "value": deny["value"], "type": "button"}],
        }
        assert _interaction(http, click).status_code == 200
        (opened,) = slack.of("views.open")  # before the ack: the trigger lives 3 seconds
        assert opened["trigger_id"] == "trig-deny-1" and opened["_token"] == TOKEN
        view = opened["view"] if isinstance(opened["view"], dict) else json.loads(opened["view"])
        assert view["type"] == "modal" and view["blocks"][0]["element"]["type"] == "plain_text_input"
        pending = http.get("/api/v1/approvals", params={"status": "pending"}, headers=server.auth).json()["items"]
        assert deny["value"] in {a["id"] for a in pending}  # the click alone decides nothing

        # A forged submission, and one by someone not linked, deny nothing.
        forged = _interaction(http, _submission(view, "U0ALICE", "forged"), secret="not-the-secret")
        assert (forged.status_code, forged.json()["code"]) == (401, "signature_invalid")
        assert _interaction(http, _submission(view, "U0MALLORY", "mine now")).status_code == 200
        slack.wait_for(
            lambda calls: any("Connect your account" in str(p.get("text")) for p in _in_thread(slack, thread))
        )
        pending = http.get("/api/v1/approvals", params={"status": "pending"}, headers=server.auth).json()["items"]
        assert deny["value"] in {a["id"] for a in pending}

        submitted = _interaction(http, _submission(view, "U0ALICE", "not to that list"))
        assert submitted.status_code == 200 and submitted.content == b""  # an empty 200 closes the modal
        slack.wait_for(
            lambda calls: any(
                "Denied by <@U0ALICE>: not to that list" in str(p.get("text")) for p in _in_thread(slack, thread)
            )
        )
        denied = http.get("/api/v1/approvals", params={"status": "denied"}, headers=server.auth).json()["items"]
        (row,) = [a for a in denied if a["id"] == deny["value"]]
        assert "not to that list" in json.dumps(row), row
