"""`ask_user` questions answered in a channel (issue 34) on `pa dev`: the run of a Telegram message asks its person
(a scripted OpenAI-compatible model on loopback, the member's default model), the question is sent into the chat
with its choices, a reply that does not fit is refused with the reason, and the reply that does answers it: the
run goes on and its answer lands in the same chat."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.channel_fakes import FakeTelegram, running_fake_telegram, telegram_message
from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, last_user_text, running_fake_provider, tool_results

QUESTION = {"question": "Which environment?", "choices": ["staging", "production"]}
BOT_TOKEN, SECRET, USER = "123456:TEST-token", "tg-secret-token-for-tests", 6001


def deploy_script(messages: list[dict[str, Any]]) -> dict[str, Any]:
    answers = tool_results(messages)
    if not answers:
        return {"tool_calls": [{"name": "ask_user", "arguments": QUESTION}]}
    return {"content": f"Deploying build {last_user_text(messages)[-2:]} to {answers[-1]}."}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeTelegram, FakeProvider]]:
    with running_fake_telegram() as telegram, running_fake_provider(deploy_script) as fake:
        env = {"PA_TELEGRAM_API_URL": telegram.base_url}
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-channel-questions"), env_extra=env) as server:
            admin = server.auth_for("boss", "org-admin")
            with httpx.Client(base_url=server.url, timeout=30) as http:
                provider = http.post(
                    "/api/v1/admin/providers",
                    headers=admin,
                    json={"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2},
                )
                assert provider.status_code == 201, provider.text
                model = http.post(
                    f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json={"name": "m"}
                )
                assert model.status_code == 201, model.text
                put = http.put(
                    "/api/v1/admin/channels/telegram",
                    json={"bot_token": BOT_TOKEN, "secret_token": SECRET},
                    headers=admin,
                )
                assert put.status_code == 200, put.text
                mine = http.put("/api/v1/me/settings", json={"default_model": "fake:m"}, headers=server.auth)
                assert mine.status_code == 200, mine.text
            yield server, telegram, fake


def _post(http: httpx.Client, body: bytes) -> None:
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET}
    assert http.post("/api/v1/channels/telegram/e2e", content=body, headers=headers).status_code == 200


def _texts(telegram: FakeTelegram) -> list[str]:
    return [str(p.get("text")) for m, p in list(telegram.calls) if m in ("sendMessage", "editMessageText")]


@pytest.mark.timeout(300)
def test_a_question_is_answered_by_a_reply_in_the_chat(world: tuple[DevServer, FakeTelegram, FakeProvider]) -> None:
    server, telegram, _ = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _post(http, telegram_message(1, USER, USER, "hello"))
        telegram.wait_for(lambda calls: any("Connect your account" in t for t in _texts(telegram)))
        code = re.search(r"\b([A-Z2-9]{8})\b", _texts(telegram)[-1])
        assert code is not None
        linked = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth)
        assert linked.status_code == 201, linked.text

        _post(http, telegram_message(2, USER, USER, "deploy build 42"))
        telegram.wait_for(lambda calls: any("Which environment?" in t for t in _texts(telegram)))
        assert any("Reply with one of: staging, production" in t for t in _texts(telegram))
        _post(http, telegram_message(3, USER, USER, "the moon"))
        telegram.wait_for(lambda calls: any("does not fit" in t for t in _texts(telegram)))
        _post(http, telegram_message(4, USER, USER, "production"))
        telegram.wait_for(lambda calls: any("Deploying build 42 to production." in t for t in _texts(telegram)))
        answered = http.get("/api/v1/questions", params={"status": "answered"}, headers=server.auth).json()["items"]
        assert [q["answer"] for q in answered] == ["production"]
        (run,) = http.get("/api/v1/runs", headers=server.auth).json()["items"]  # answers run nothing new
        assert run["trigger_source"] == "telegram"
        with http.stream("GET", f"/api/v1/runs/{run['id']}/events", headers=server.auth) as stream:
            for line in stream.iter_lines():  # to the run's end (the stream goes on past the question's pause)
                event = json.loads(line[5:]) if line.startswith("data:") else {}
                if event.get("type") == "RUN_FINISHED" and event["outcome"]["type"] != "interrupt":
                    break
        assert http.get(f"/api/v1/runs/{run['id']}", headers=server.auth).json()["status"] == "succeeded"
