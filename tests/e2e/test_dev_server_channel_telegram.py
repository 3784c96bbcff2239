"""Telegram in (issue 34) on `pa dev` as a user runs it, against a fake Bot API on loopback that
python-telegram-bot's `Bot` talks to (`PA_TELEGRAM_API_URL`): the admin's save points the bot at the org's webhook
(`setWebhook` with the secret token), and updates are posted as the Bot API posts them to it
(`X-Telegram-Bot-Api-Secret-Token`): a wrong or missing secret token is a 401 that starts nothing; an unlinked user
gets the connect reply only; a linked member's message runs the agent and the answer is sent and edited in the chat;
in a group only a mention of the bot is answered; an inline key resumes a run waiting for an approval."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.channel_fakes import FakeTelegram, running_fake_telegram, telegram_callback, telegram_message
from tests.e2e.pa_dev import DevServer, running_pa_dev

BOT_TOKEN, SECRET = "123456:TEST-token", "tg-secret-token-for-tests"
USER, CHAT, GROUP = 5001, 5001, -100777


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeTelegram]]:
    with running_fake_telegram() as telegram:
        env = {"PA_TELEGRAM_API_URL": telegram.base_url, "PA_PUBLIC_URL": "https://pa.example.com"}
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-telegram"), env_extra=env) as server:
            admin = server.auth_for("boss", "org-admin")
            body = {"bot_token": BOT_TOKEN, "secret_token": SECRET}
            put = httpx.put(f"{server.url}/api/v1/admin/channels/telegram", json=body, headers=admin, timeout=30)
            assert put.status_code == 200, put.text
            assert put.json()["key"] == "e2e" and SECRET not in put.text and BOT_TOKEN not in put.text
            # The deployment knows its address: the bot is pointed at the org's webhook with the secret token.
            (hook,) = telegram.of("setWebhook")
            assert (
                hook["url"] == "https://pa.example.com/api/v1/channels/telegram/e2e" and hook["secret_token"] == SECRET
            )
            assert hook["_token"] == BOT_TOKEN and json.loads(hook["allowed_updates"]) == [
                "message",
                "callback_query",
                "message_reaction",
            ]
            telegram.calls.clear()
            yield server, telegram


def _post(http: httpx.Client, body: bytes, secret: str | None = SECRET) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Telegram-Bot-Api-Secret-Token"] = secret
    return http.post("/api/v1/channels/telegram/e2e", content=body, headers=headers)


def _texts(telegram: FakeTelegram, chat: int) -> list[str]:
    return [
        str(p.get("text"))
        for m, p in list(telegram.calls)
        if m in ("sendMessage", "editMessageText") and str(p.get("chat_id")) == str(chat)
    ]


def _runs(http: httpx.Client, server: DevServer) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = http.get("/api/v1/runs", headers=server.auth).json()["items"]
    return items


@pytest.mark.timeout(300)
def test_secret_token_link_answer_and_group_mentions(world: tuple[DevServer, FakeTelegram]) -> None:
    server, telegram = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        for wrong in ("not-the-secret-token", None):
            refused = _post(http, telegram_message(1, USER, CHAT, "what time is it?"), wrong)
            assert (refused.status_code, refused.json()["code"]) == (401, "secret_token_invalid")
        assert telegram.calls == [] and _runs(http, server) == []  # nothing stored, nothing sent

        assert _post(http, telegram_message(2, USER, CHAT, "hello")).status_code == 200
        telegram.wait_for(lambda calls: any(m == "sendMessage" for m, _ in calls))
        (connect,) = _texts(telegram, CHAT)
        code = re.search(r"\b([A-Z2-9]{8})\b", connect)
        assert code is not None and "Connect your account" in connect
        assert _runs(http, server) == []
        linked = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth)
        assert linked.status_code == 201 and linked.json()["external_id"] == str(USER), linked.text
        assert [link["kind"] for link in http.get("/api/v1/me/channel-links", headers=server.auth).json()] == [
            "telegram"
        ]

        started = time.monotonic()
        assert _post(http, telegram_message(3, USER, CHAT, "what time is it?")).status_code == 200
        assert time.monotonic() - started < 3.0
        telegram.wait_for(lambda calls: any("The time is" in t for t in _texts(telegram, CHAT)))
        (run,) = _runs(http, server)
        assert run["trigger_source"] == "telegram"
        assert all(p["_token"] == BOT_TOKEN for _, p in telegram.calls)

        # In a group, a message that does not mention the bot is not for it; one that does is answered.
        assert _post(http, telegram_message(4, USER, GROUP, "what time is it?", "group")).status_code == 200
        assert (
            _post(http, telegram_message(5, USER, GROUP, "@pa_test_bot what time is it?", "group")).status_code == 200
        )
        telegram.wait_for(lambda calls: any("The time is" in t for t in _texts(telegram, GROUP)))
        assert len(_runs(http, server)) == 2
        sent = [p for p in telegram.of("sendMessage") if str(p["chat_id"]) == str(GROUP)]
        assert len(sent) == 1 and telegram.of("editMessageText")  # one answer, edited as it grew


@pytest.mark.timeout(300)
def test_an_inline_key_resumes_a_run_waiting_for_an_approval(world: tuple[DevServer, FakeTelegram]) -> None:
    server, telegram = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        if not http.get("/api/v1/me/channel-links", headers=server.auth).json():
            pytest.fail("the first test links the member")  # module order: linking is the first test's
        chat = 5002
        assert _post(http, telegram_message(10, USER, chat, "send hello to team@example.com")).status_code == 200
        telegram.wait_for(
            lambda calls: any(str(p.get("chat_id")) == str(chat) and p.get("reply_markup") for _, p in calls)
        )
        (asked,) = [p for _, p in telegram.calls if str(p.get("chat_id")) == str(chat) and p.get("reply_markup")]
        keys = json.loads(asked["reply_markup"])["inline_keyboard"][0]
        assert [k["text"] for k in keys] == ["Approve", "Deny"]
        approve = keys[0]["callback_data"]
        # Someone else pressing it (not linked): the connect reply, and the approval stays pending.
        assert _post(http, telegram_callback(11, 9999, chat, approve)).status_code == 200
        telegram.wait_for(lambda calls: any("Connect your account" in t for t in _texts(telegram, chat)))
        assert _post(http, telegram_callback(12, USER, chat, approve)).status_code == 200
        telegram.wait_for(lambda calls: any(t.startswith("Approved by") for t in _texts(telegram, chat)))
        approved = http.get("/api/v1/approvals", params={"status": "approved"}, headers=server.auth).json()["items"]
        assert approve.removeprefix("approve:") in {a["id"] for a in approved}
        assert telegram.of("answerCallbackQuery")  # the button's spinner stops
