"""Long answers and rate limits in the channels (issue 34) on `pa dev`, against the fake Slack Web API and Bot API
on loopback and a scripted OpenAI-compatible model (the member's default model) that answers 10,000 characters: the
answer arrives whole across messages in the same thread, in order, none over the service's limit and no code fence
cut where it could be avoided; a call the service refuses once for its rate limit (Slack's 429 with `Retry-After`,
Telegram's `retry_after`) is made again after the wait, and the whole answer still lands. A Slack direct message
(`message.im`) from a linked member runs and is answered in the DM; a channel the admin gives an agent runs that
agent."""

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
from tests.fake_provider import last_user_text, running_fake_provider

TEAM, SLACK_SECRET, SLACK_TOKEN = "T0LONG", "slack-signing-secret-long", "xoxb-long-token"
TG_TOKEN, TG_SECRET, TG_USER = "654321:LONG-token", "tg-secret-long", 7001
SLACK_LIMIT, TELEGRAM_LIMIT = 3900, 4096
FENCE = "```"
CHANNEL_BOT = "You are the channel bot of the support channel."


def long_answer(tag: str) -> str:
    """10,000 characters and more of numbered paragraphs, a line-broken list and a code block (so the order and
    the wholeness of what arrives can be checked)."""
    parts: list[str] = []
    n = 0
    while sum(len(p) + 2 for p in parts) < 10_000:
        n += 1
        if n % 9 == 0:
            parts.append(FENCE + "python\n" + "\n".join(f"value_{n}_{i} = {i} * {n}" for i in range(30)) + "\n" + FENCE)
        elif n % 5 == 0:
            parts.append("\n".join(f"- {tag} item {n}.{i}" for i in range(12)))
        else:
            parts.append(f"{tag} paragraph {n}: " + " ".join(f"word{n}.{i}" for i in range(45)))
    return "\n\n".join(parts)


def script(messages: list[dict[str, Any]]) -> dict[str, Any]:
    text = last_user_text(messages)
    if any(CHANNEL_BOT in str(m.get("content")) for m in messages if m.get("role") == "system"):
        return {"content": f"The channel bot says: {text}"}
    if text.startswith("long "):
        return {"content": long_answer(text.removeprefix("long "))}
    return {"content": f"You said: {text}"}


World = tuple[DevServer, FakeSlack, FakeTelegram]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_fake_slack() as slack, running_fake_telegram() as telegram, running_fake_provider(script) as fake:
        env = {"PA_SLACK_API_URL": slack.base_url, "PA_TELEGRAM_API_URL": telegram.base_url}
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-channel-long"), env_extra=env) as server:
            admin = server.auth_for("boss", "org-admin")
            with httpx.Client(base_url=server.url, timeout=30) as http:
                body = {"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2}
                provider = http.post("/api/v1/admin/providers", headers=admin, json=body)
                assert provider.status_code == 201, provider.text
                added = http.post(
                    f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json={"name": "m"}
                )
                assert added.status_code == 201, added.text
                slack_body = {"team_id": TEAM, "bot_token": SLACK_TOKEN, "signing_secret": SLACK_SECRET}
                assert http.put("/api/v1/admin/channels/slack", json=slack_body, headers=admin).status_code == 200
                tg_body = {"bot_token": TG_TOKEN, "secret_token": TG_SECRET}
                assert http.put("/api/v1/admin/channels/telegram", json=tg_body, headers=admin).status_code == 200
                mine = http.put("/api/v1/me/settings", json={"default_model": "fake:m"}, headers=server.auth)
                assert mine.status_code == 200, mine.text
                _link_both(http, server, slack, telegram)
            yield server, slack, telegram


def _slack_event(http: httpx.Client, event: dict[str, Any]) -> None:
    payload = {"token": "x", "team_id": TEAM, "type": "event_callback", "event_id": f"Ev{event['ts']}", "event": event}
    body = json.dumps(payload).encode()
    headers = {**slack_headers(SLACK_SECRET, body), "Content-Type": "application/json"}
    assert http.post("/api/v1/channels/slack/events", content=body, headers=headers).status_code == 200


def _mention(http: httpx.Client, ts: str, text: str) -> None:
    _slack_event(
        http, {"type": "app_mention", "user": "U0LONG", "text": f"<@U0BOT> {text}", "ts": ts, "channel": "C0LONG"}
    )


def _telegram(http: httpx.Client, update_id: int, text: str) -> None:
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": TG_SECRET}
    body = telegram_message(update_id, TG_USER, TG_USER, text)
    assert http.post("/api/v1/channels/telegram/e2e", content=body, headers=headers).status_code == 200


def _confirm(http: httpx.Client, server: DevServer, text: str) -> None:
    code = re.search(r"\b([A-Z2-9]{8})\b", text)
    assert code is not None and "Connect your account" in text, text
    linked = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth)
    assert linked.status_code == 201, linked.text


def _link_both(http: httpx.Client, server: DevServer, slack: FakeSlack, telegram: FakeTelegram) -> None:
    _mention(http, "1700000100.000001", "hello")
    slack.wait_for(lambda calls: any(m == "chat.postMessage" for m, _ in calls))
    _confirm(http, server, str(slack.of("chat.postMessage")[-1]["text"]))
    _telegram(http, 1, "hello")
    telegram.wait_for(lambda calls: any(m == "sendMessage" for m, _ in calls))
    _confirm(http, server, str(telegram.of("sendMessage")[-1]["text"]))


def _messages(
    calls: list[tuple[str, dict[str, Any]]],
    post: str,
    edit: str,
    ids: Callable[[int], str],
    edit_id: str,
    where: Callable[[dict[str, Any]], bool],
) -> list[str]:
    """The messages posted where `where` says, in the order posted, each with its last text (the n-th `post` got
    the id `ids(n)`; an `edit` names its message by `edit_id`)."""
    texts: dict[str, str] = {}
    order: list[str] = []
    n = 0
    for method, params in calls:
        if method == post:
            n += 1
            if where(params):
                order.append(ids(n))
                texts[ids(n)] = str(params.get("text"))
        elif method == edit and str(params.get(edit_id)) in texts:
            texts[str(params.get(edit_id))] = str(params.get("text"))
    return [texts[i] for i in order]


def _slack_thread(slack: FakeSlack, channel: str, thread: str) -> list[str]:
    return _messages(
        list(slack.calls),
        "chat.postMessage",
        "chat.update",
        lambda n: f"1700000000.{n:06d}",  # the fake's n-th post's ts
        "ts",
        lambda p: p.get("channel") == channel and p.get("thread_ts") == thread,
    )


def _telegram_chat(telegram: FakeTelegram, chat: int) -> list[str]:
    return _messages(
        list(telegram.calls),
        "sendMessage",
        "editMessageText",
        lambda n: str(99 + n),  # the fake's n-th message's id
        "message_id",
        lambda p: str(p.get("chat_id")) == str(chat),
    )


def _arrives_whole(pieces: list[str], answer: str, limit: int) -> None:
    assert len(pieces) >= 3 and all(len(p) <= limit for p in pieces), [len(p) for p in pieces]
    assert "".join(pieces) == answer
    assert all(p.count(FENCE) % 2 == 0 for p in pieces)  # no code block cut in two


@pytest.mark.timeout(300)
def test_a_long_slack_answer_arrives_whole_across_messages_in_the_thread(world: World) -> None:
    server, slack, _ = world
    answer = long_answer("slack")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        thread = "1700000101.000001"
        _mention(http, thread, "long slack")
        slack.wait_for(lambda calls: "".join(_slack_thread(slack, "C0LONG", thread)) == answer, timeout=120)
    _arrives_whole(_slack_thread(slack, "C0LONG", thread), answer, SLACK_LIMIT)


@pytest.mark.timeout(300)
def test_a_long_telegram_answer_arrives_whole_across_messages(world: World) -> None:
    server, _, telegram = world
    answer = long_answer("telegram")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        before = len(_telegram_chat(telegram, TG_USER))
        _telegram(http, 2, "long telegram")
        telegram.wait_for(lambda calls: "".join(_telegram_chat(telegram, TG_USER)[before:]) == answer, timeout=120)
    _arrives_whole(_telegram_chat(telegram, TG_USER)[before:], answer, TELEGRAM_LIMIT)


@pytest.mark.timeout(300)
def test_slack_and_telegram_rate_limits_are_waited_out_and_the_whole_answer_lands(world: World) -> None:
    server, slack, telegram = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        slack_answer, telegram_answer = long_answer("slack-limited"), long_answer("telegram-limited")
        thread = "1700000102.000001"
        slack.limit_once("chat.postMessage", retry_after=1)
        _mention(http, thread, "long slack-limited")
        slack.wait_for(lambda calls: "".join(_slack_thread(slack, "C0LONG", thread)) == slack_answer, timeout=120)
        assert len(slack.of("chat.postMessage:429")) == 1  # refused once, and the same post made again

        before = len(_telegram_chat(telegram, TG_USER))
        telegram.limit_once("sendMessage", retry_after=1)
        _telegram(http, 3, "long telegram-limited")
        telegram.wait_for(
            lambda calls: "".join(_telegram_chat(telegram, TG_USER)[before:]) == telegram_answer, timeout=120
        )
        assert len(telegram.of("sendMessage:429")) == 1
        assert {r["status"] for r in _settled(http, server)} == {"succeeded"}


@pytest.mark.timeout(300)
def test_a_slack_direct_message_from_a_linked_member_is_answered_in_the_dm(world: World) -> None:
    server, slack, _ = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        ts = "1700000103.000001"
        dm = {
            "type": "message",
            "channel_type": "im",
            "user": "U0LONG",
            "text": "just us",
            "ts": ts,
            "channel": "D0LONG",
        }
        _slack_event(http, dm)
        slack.wait_for(lambda calls: _slack_thread(slack, "D0LONG", ts) == ["You said: just us"])
        titles = {r["id"]: _title(http, server, r["chat_id"]) for r in _settled(http, server)}
        (run,) = [r for r in _settled(http, server) if titles[r["id"]].startswith("just us")]
        assert run["trigger_source"] == "slack" and run["status"] == "succeeded", run


@pytest.mark.timeout(300)
def test_a_channel_given_an_agent_runs_that_agent(world: World) -> None:
    server, slack, _ = world
    admin = server.auth_for("boss", "org-admin")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        body = {"name": "Channel bot", "slug": "channel-bot", "model": "fake:m", "visibility": "org"}
        created = http.post("/api/v1/agents", json={**body, "instructions": CHANNEL_BOT}, headers=admin)
        assert created.status_code == 201, created.text
        slack_body = {"team_id": TEAM, "bot_token": SLACK_TOKEN, "signing_secret": SLACK_SECRET}
        put = http.put("/api/v1/admin/channels/slack", json={**slack_body, "agent": "channel-bot"}, headers=admin)
        assert put.status_code == 200 and put.json()["agent"] == "channel-bot", put.text
        try:
            thread = "1700000104.000001"
            _mention(http, thread, "who answers?")
            slack.wait_for(
                lambda calls: _slack_thread(slack, "C0LONG", thread) == ["The channel bot says: who answers?"]
            )
            titles = {r["id"]: _title(http, server, r["chat_id"]) for r in _settled(http, server)}
            (run,) = [r for r in _settled(http, server) if titles[r["id"]].startswith("who answers?")]
            assert run["agent"]["id"] == created.json()["id"] and run["status"] == "succeeded", run
        finally:
            assert http.put("/api/v1/admin/channels/slack", json=slack_body, headers=admin).status_code == 200


def _title(http: httpx.Client, server: DevServer, chat_id: str) -> str:
    return str(http.get(f"/api/v1/chats/{chat_id}", headers=server.auth).json()["title"])


def _settled(http: httpx.Client, server: DevServer) -> list[dict[str, Any]]:
    """The member's runs once none is still going (bounded)."""
    deadline = time.monotonic() + 60
    while True:
        runs: list[dict[str, Any]] = http.get("/api/v1/runs", headers=server.auth).json()["items"]
        if all(r["status"] not in ("queued", "running") for r in runs) or time.monotonic() > deadline:
            return runs
        time.sleep(0.2)  # the poll's interval
