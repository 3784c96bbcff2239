"""Channel answers cite what they used (issue 36, item 6) on `pa dev`, against the fake Slack Web API and Bot API on
loopback: a document uploaded to the org's knowledge, then a linked member's message that has the offline demo model
search it (`/tool search_knowledge {...}`); the answer posted in the Slack thread, in the Telegram chat and in the
e-mail reply (sent with `smtplib` to `pa dev`'s SMTP server, read back from the SES emulator) ends with the
footnotes a `/v1` answer ends with, naming the document and its page, numbered as the web chat numbers them. An
answer that searched nothing has none."""

from __future__ import annotations

import json
import re
import smtplib
import time
from collections.abc import Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

import httpx
import pytest

from personal_agent.local.ports import free_port
from tests.channel_fakes import (
    FakeSlack,
    FakeTelegram,
    running_fake_slack,
    running_fake_telegram,
    slack_headers,
    telegram_message,
)
from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.knowledge import make_pdf, upload_ready

TEAM, SLACK_SECRET, SLACK_TOKEN = "T0CITE", "slack-signing-secret-cite", "xoxb-cite-token"
TG_TOKEN, TG_SECRET, TG_USER = "765432:CITE-token", "tg-secret-cite", 8001
PAGES = ["Offsite handbook, part one: the agenda is sent a week before.", "The ferry to the island leaves from pier 9."]
MAIL_TO, MAIL_FROM = "agent@e2e.example.com", "alice@example.com"
SEARCH = "/tool search_knowledge " + json.dumps({"query": "which pier does the ferry leave from"})

World = tuple[DevServer, FakeSlack, FakeTelegram]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_fake_slack() as slack, running_fake_telegram() as telegram:
        env = {"PA_SLACK_API_URL": slack.base_url, "PA_TELEGRAM_API_URL": telegram.base_url}
        env["PA_SMTP_PORT"] = str(free_port())
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-channel-cite"), env_extra=env) as server:
            admin = server.auth_for("boss", "org-admin")
            with httpx.Client(base_url=server.url, timeout=60) as http:
                slack_body = {"team_id": TEAM, "bot_token": SLACK_TOKEN, "signing_secret": SLACK_SECRET}
                assert http.put("/api/v1/admin/channels/slack", json=slack_body, headers=admin).status_code == 200
                tg_body = {"bot_token": TG_TOKEN, "secret_token": TG_SECRET}
                assert http.put("/api/v1/admin/channels/telegram", json=tg_body, headers=admin).status_code == 200
                mail_body = {"address": MAIL_TO}
                assert http.put("/api/v1/admin/channels/email", json=mail_body, headers=admin).status_code == 200
                upload_ready(http, server.auth, "handbook.pdf", make_pdf(PAGES))
                _link(http, server, slack, telegram)
            yield server, slack, telegram


def _mention(http: httpx.Client, ts: str, text: str) -> None:
    event = {"type": "app_mention", "user": "U0CITE", "text": f"<@U0BOT> {text}", "ts": ts, "channel": "C0CITE"}
    payload = {"token": "x", "team_id": TEAM, "type": "event_callback", "event_id": f"Ev{ts}", "event": event}
    body = json.dumps(payload).encode()
    headers = {**slack_headers(SLACK_SECRET, body), "Content-Type": "application/json"}
    assert http.post("/api/v1/channels/slack/events", content=body, headers=headers).status_code == 200


def _telegram(http: httpx.Client, update_id: int, text: str) -> None:
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": TG_SECRET}
    body = telegram_message(update_id, TG_USER, TG_USER, text)
    assert http.post("/api/v1/channels/telegram/e2e", content=body, headers=headers).status_code == 200


def _confirm(http: httpx.Client, server: DevServer, text: str) -> None:
    code = re.search(r"\b([A-Z2-9]{8})\b", text)
    assert code is not None and "Connect your account" in text, text
    linked = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth)
    assert linked.status_code == 201, linked.text


def _link(http: httpx.Client, server: DevServer, slack: FakeSlack, telegram: FakeTelegram) -> None:
    _mention(http, "1700000200.000001", "hello")
    slack.wait_for(lambda calls: any(m == "chat.postMessage" for m, _ in calls))
    _confirm(http, server, str(slack.of("chat.postMessage")[-1]["text"]))
    _telegram(http, 1, "hello")
    telegram.wait_for(lambda calls: any(m == "sendMessage" for m, _ in calls))
    _confirm(http, server, str(telegram.of("sendMessage")[-1]["text"]))


def _last_texts(calls: list[tuple[str, dict[str, Any]]], post: str, edit: str, key: str, ids: list[str]) -> list[str]:
    """Each message posted (its id in `ids`, in order), with its last text after the edits."""
    texts: dict[str, str] = {}
    posted = iter(ids)
    for method, params in calls:
        if method == post:
            texts[next(posted)] = str(params.get("text"))
        elif method == edit and str(params.get(key)) in texts:
            texts[str(params.get(key))] = str(params.get("text"))
    return list(texts.values())


def _slack_thread(slack: FakeSlack, thread: str) -> list[str]:
    calls = list(slack.calls)
    posts = [p for m, p in calls if m == "chat.postMessage"]
    ids = [f"1700000000.{i + 1:06d}" for i in range(len(posts))]  # the fake's ts for its n-th post
    mine = {ids[i] for i, p in enumerate(posts) if p.get("thread_ts") == thread}
    texts = _last_texts(calls, "chat.postMessage", "chat.update", "ts", ids)
    return [t for i, t in zip(ids, texts, strict=True) if i in mine]


def _telegram_chat(telegram: FakeTelegram) -> list[str]:
    calls = list(telegram.calls)
    ids = [str(100 + n) for n in range(sum(1 for m, _ in calls if m == "sendMessage"))]  # the fake's ids from 100
    return _last_texts(calls, "sendMessage", "editMessageText", "message_id", ids)


FOOTNOTE = re.compile(
    r"\n\nSources:\n\[1\] handbook\.pdf, p\. 2 \[chunk [0-9a-f-]{36}\]"
    r"\n\[2\] handbook\.pdf, p\. 1 \[chunk [0-9a-f-]{36}\]$"
)
"""The passages in the order the search returned them (the page that answers first), as the web chat numbers them."""


@pytest.mark.timeout(300)
def test_a_slack_answer_that_searched_ends_with_its_sources(world: World) -> None:
    server, slack, _ = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        plain = "1700000201.000100"
        _mention(http, plain, "what time is it?")
        slack.wait_for(lambda calls: any("The time is" in t for t in _slack_thread(slack, plain)))
        thread = "1700000202.000100"
        _mention(http, thread, SEARCH)
        slack.wait_for(lambda calls: any("Sources:" in t for t in _slack_thread(slack, thread)), timeout=120)
        *_, last = _slack_thread(slack, thread)
        assert FOOTNOTE.search(last), last
        assert last.index("pier 9") < last.index("Sources:")  # the demo model quotes what it found, above
        # The answer before it searched nothing, and cites nothing (its run ended long before this one's).
        assert not any("Sources:" in t for t in _slack_thread(slack, plain))


@pytest.mark.timeout(300)
def test_a_telegram_answer_that_searched_ends_with_its_sources(world: World) -> None:
    server, _, telegram = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _telegram(http, 2, SEARCH)
        telegram.wait_for(lambda calls: any("Sources:" in t for t in _telegram_chat(telegram)), timeout=120)
        (answer,) = [t for t in _telegram_chat(telegram) if "Sources:" in t]
        assert FOOTNOTE.search(answer), answer
        assert answer.index("pier 9") < answer.index("Sources:")


def _mail(server: DevServer, message_id: str, text: str) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = f"Alice <{MAIL_FROM}>", MAIL_TO, "Ferry"
    message["Message-ID"] = message_id
    message.set_content(text)
    with smtplib.SMTP("127.0.0.1", int(server.env["PA_SMTP_PORT"]), timeout=30) as smtp:
        smtp.send_message(message)


def _mail_reply(server: DevServer, message_id: str, containing: str, timeout: float = 120) -> str:
    """The body of `pa dev`'s reply to `message_id` that contains `containing` (read from the SES emulator)."""
    deadline = time.monotonic() + timeout
    while True:
        data = httpx.get(f"{server.aws_url}/moto-api/data.json", timeout=30).json()
        raws = [m["raw_data"] for m in data.get("ses", {}).get("RawMessage", [])]
        for raw in raws:
            mail = BytesParser(policy=policy.default).parsebytes(raw.encode())
            part = mail.get_body(preferencelist=("plain",)) if isinstance(mail, EmailMessage) else None
            body = str(part.get_content()) if part is not None else ""
            if mail["In-Reply-To"] == message_id and containing in body:
                return body
        assert time.monotonic() < deadline, f"no reply to {message_id} containing {containing!r}"
        time.sleep(0.5)  # polling the emulator's outbox: it has no way to wait on


@pytest.mark.timeout(300)
def test_an_email_answer_that_searched_ends_with_its_sources(world: World) -> None:
    server, _, _ = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _mail(server, "<cite-hello@example.com>", "hello")
        code = re.search(r"\b([A-Z2-9]{8})\b", _mail_reply(server, "<cite-hello@example.com>", "Connect your account"))
        assert code is not None
        linked = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth)
        assert linked.status_code == 201, linked.text
        _mail(server, "<cite-ask@example.com>", SEARCH)
        answer = _mail_reply(server, "<cite-ask@example.com>", "Sources:").rstrip()
        assert FOOTNOTE.search(answer), answer
        assert answer.index("pier 9") < answer.index("Sources:")
