"""Reactions as feedback (issue 37) on `pa dev`, against the fake Slack Web API and the fake Bot API on loopback: a
thumb put on an answer the agent posted is the linked member's rating of that answer's run (changeable, taken back
when the thumb is); an unlinked account's thumb, a thumb on a message that is not the agent's answer, or another
emoji rate nothing, and nothing is said in the channel."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.channel_fakes import (
    FakeSlack,
    FakeTelegram,
    running_fake_slack,
    running_fake_telegram,
    slack_headers,
    telegram_message,
)
from tests.e2e.pa_dev import DevServer, running_pa_dev

TEAM, SIGNING, SLACK_TOKEN = "T0REACT", "slack-signing-secret-reactions", "xoxb-reactions"
TG_TOKEN, TG_SECRET = "654321:REACT-token", "tg-secret-token-reactions"
CHANNEL, TG_USER = "C0REACT", 7001


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeSlack, FakeTelegram]]:
    with running_fake_slack() as slack, running_fake_telegram() as telegram:
        env = {"PA_SLACK_API_URL": slack.base_url, "PA_TELEGRAM_API_URL": telegram.base_url}
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-reactions"), env_extra=env) as server:
            admin = server.auth_for("boss", "org-admin")
            for kind, body in (
                ("slack", {"team_id": TEAM, "bot_token": SLACK_TOKEN, "signing_secret": SIGNING}),
                ("telegram", {"bot_token": TG_TOKEN, "secret_token": TG_SECRET}),
            ):
                put = httpx.put(f"{server.url}/api/v1/admin/channels/{kind}", json=body, headers=admin, timeout=30)
                assert put.status_code == 200, put.text
            yield server, slack, telegram


def _until(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)  # polling an HTTP API for a state change, with a deadline
    raise AssertionError(f"not seen in {timeout}s: {what}")


def _slack(http: httpx.Client, event: dict[str, Any], event_id: str) -> None:
    payload = {"token": "x", "team_id": TEAM, "type": "event_callback", "event_id": event_id, "event": event}
    body = json.dumps(payload).encode()
    headers = {**slack_headers(SIGNING, body), "Content-Type": "application/json"}
    answer = http.post("/api/v1/channels/slack/events", content=body, headers=headers)
    assert answer.status_code == 200, answer.text


def _reaction(kind: str, user: str, reaction: str, ts: str) -> dict[str, Any]:
    item = {"type": "message", "channel": CHANNEL, "ts": ts}
    return {"type": kind, "user": user, "reaction": reaction, "item": item, "item_user": "U0BOT", "event_ts": ts}


def _status(http: httpx.Client, admin: dict[str, str], kind: str, event_id: str) -> str | None:
    for event in http.get(f"/api/v1/admin/channels/{kind}/events", headers=admin).json():
        if event["event_id"] == event_id and event["status"] != "received":
            return str(event["status"])
    return None


def _rating(http: httpx.Client, server: DevServer, run_id: str) -> int | None:
    feedback = http.get(f"/api/v1/runs/{run_id}/feedback", headers=server.auth).json()["feedback"]
    return None if feedback is None else int(feedback["rating"])


def _slack_link(http: httpx.Client, server: DevServer, slack: FakeSlack) -> None:
    mention = {"type": "app_mention", "user": "U0ALICE", "text": "<@U0BOT> hi", "ts": "1.1", "channel": CHANNEL}
    _slack(http, mention, "EvLink")
    slack.wait_for(lambda calls: any("Connect your account" in str(p.get("text")) for _, p in calls))
    text = next(str(p["text"]) for p in slack.of("chat.postMessage") if "Connect" in str(p.get("text")))
    code = re.search(r"\b([A-Z2-9]{8})\b", text)
    assert code is not None
    linked = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth)
    assert linked.status_code == 201, linked.text


@pytest.mark.timeout(300)
def test_a_slack_thumb_on_an_answer_is_the_members_rating(world: tuple[DevServer, FakeSlack, FakeTelegram]) -> None:
    server, slack, _ = world
    admin = server.auth_for("boss", "org-admin")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _slack_link(http, server, slack)
        mention = {"type": "app_mention", "user": "U0ALICE", "text": "<@U0BOT> what time is it?", "ts": "2.2"}
        _slack(http, {**mention, "channel": CHANNEL}, "EvAsk")
        slack.wait_for(lambda calls: any("The time is" in str(p.get("text")) for _, p in calls))
        posts = [p for m, p in list(slack.calls) if m == "chat.postMessage"]
        answer_number = next(i + 1 for i, p in enumerate(posts) if p.get("thread_ts") == "2.2")
        answer_ts = f"1700000000.{answer_number:06d}"  # the fake's n-th post
        runs = http.get("/api/v1/runs", headers=server.auth).json()["items"]
        (run_id,) = [r["id"] for r in runs if r["trigger_source"] == "slack"]
        posted_before = len(slack.calls)

        # Someone not linked: nothing is rated, nothing is said.
        _slack(http, _reaction("reaction_added", "U0BOB", "+1", answer_ts), "EvBob")
        assert _until(lambda: _status(http, admin, "slack", "EvBob"), "Bob's reaction handled") == "unlinked"
        # Another emoji is not feedback; a thumb on a message that is not an answer rates nothing.
        _slack(http, _reaction("reaction_added", "U0ALICE", "tada", answer_ts), "EvTada")
        _slack(http, _reaction("reaction_added", "U0ALICE", "+1", "2.2"), "EvNotAnswer")
        assert _until(lambda: _status(http, admin, "slack", "EvNotAnswer"), "the stray thumb") == "not_an_answer"
        assert _rating(http, server, run_id) is None

        _slack(http, _reaction("reaction_added", "U0ALICE", "+1::skin-tone-3", answer_ts), "EvUp")
        _until(lambda: _rating(http, server, run_id) == 1, "Alice's thumbs up")
        _slack(http, _reaction("reaction_added", "U0ALICE", "thumbsdown", answer_ts), "EvDown")
        _until(lambda: _rating(http, server, run_id) == -1, "Alice's thumbs down replacing it")
        # Taking off the thumbs up she no longer gives leaves the thumbs down; taking that off removes it.
        _slack(http, _reaction("reaction_removed", "U0ALICE", "+1", answer_ts), "EvUpOff")
        assert _until(lambda: _status(http, admin, "slack", "EvUpOff"), "the old thumb off") == "not_rated"
        assert _rating(http, server, run_id) == -1
        _slack(http, _reaction("reaction_removed", "U0ALICE", "-1", answer_ts), "EvDownOff")
        _until(lambda: _rating(http, server, run_id) is None, "the rating taken back")

        listed = http.get("/api/v1/feedback", headers=admin).json()["items"]
        assert all(item["run_id"] != run_id for item in listed)
        assert len(slack.calls) == posted_before  # reactions are never answered


def _telegram(http: httpx.Client, update: dict[str, Any]) -> None:
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": TG_SECRET}
    answer = http.post("/api/v1/channels/telegram/e2e", content=json.dumps(update).encode(), headers=headers)
    assert answer.status_code == 200, answer.text


def _new_run(http: httpx.Client, server: DevServer, before: set[str]) -> str | None:
    runs = http.get("/api/v1/runs", headers=server.auth).json()["items"]
    return next((r["id"] for r in runs if r["id"] not in before and r["status"] == "succeeded"), None)


def _tg_reaction(update_id: int, user: int, message_id: int, old: list[str], new: list[str]) -> dict[str, Any]:
    def emoji(items: list[str]) -> list[dict[str, str]]:
        return [{"type": "emoji", "emoji": e} for e in items]

    changed = {
        "chat": {"id": TG_USER, "type": "private", "first_name": "Tess"},
        "message_id": message_id,
        "user": {"id": user, "is_bot": False, "first_name": "Tess"},
        "date": int(time.time()),
        "old_reaction": emoji(old),
        "new_reaction": emoji(new),
    }
    return {"update_id": update_id, "message_reaction": changed}


@pytest.mark.timeout(300)
def test_a_telegram_reaction_on_an_answer_is_the_members_rating(
    world: tuple[DevServer, FakeSlack, FakeTelegram],
) -> None:
    server, _, telegram = world
    admin = server.auth_for("boss", "org-admin")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        (hook,) = telegram.of("setWebhook") or [None]
        assert hook is None or "message_reaction" in json.loads(hook["allowed_updates"])
        _telegram(http, json.loads(telegram_message(1, TG_USER, TG_USER, "hello")))
        telegram.wait_for(lambda calls: any("Connect your account" in str(p.get("text")) for _, p in calls))
        text = next(str(p["text"]) for p in telegram.of("sendMessage") if "Connect" in str(p.get("text")))
        code = re.search(r"\b([A-Z2-9]{8})\b", text)
        assert code is not None
        assert http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth).is_success
        runs_before = {r["id"] for r in http.get("/api/v1/runs", headers=server.auth).json()["items"]}

        _telegram(http, json.loads(telegram_message(2, TG_USER, TG_USER, "what time is it?")))
        telegram.wait_for(lambda calls: any("The time is" in str(p.get("text")) for _, p in calls))
        run_id = _until(lambda: _new_run(http, server, runs_before), "the telegram run")
        # The fake numbers the messages it sends from 100: the connect reply was 100, the answer the next.
        sent = telegram.of("sendMessage")
        message_id = 100 + next(i for i, p in enumerate(sent) if "Connect" not in str(p.get("text")))

        _telegram(http, _tg_reaction(3, 9999, message_id, [], ["\N{THUMBS UP SIGN}"]))  # someone not linked
        assert _until(lambda: _status(http, admin, "telegram", "3"), "the stranger's reaction") == "unlinked"
        assert _rating(http, server, run_id) is None
        _telegram(http, _tg_reaction(4, TG_USER, message_id, [], ["\N{THUMBS UP SIGN}"]))
        _until(lambda: _rating(http, server, run_id) == 1, "the member's thumbs up")
        _telegram(http, _tg_reaction(5, TG_USER, message_id, ["\N{THUMBS UP SIGN}"], ["\N{THUMBS DOWN SIGN}"]))
        _until(lambda: _rating(http, server, run_id) == -1, "changed to thumbs down")
        _telegram(http, _tg_reaction(6, TG_USER, message_id, ["\N{THUMBS DOWN SIGN}"], []))
        _until(lambda: _rating(http, server, run_id) is None, "taken back")
