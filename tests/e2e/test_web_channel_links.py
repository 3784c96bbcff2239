"""Linking a channel account in the web chat (issue 34): a Telegram message from someone not yet linked gets a
one-time code from the bot (a fake Bot API on loopback); the member signs in, enters it under Settings → Channels,
and sees the account connected (then disconnects it); a wrong code is refused with the reason. Checked with axe."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.channel_fakes import FakeTelegram, running_fake_telegram, telegram_message
from tests.e2e.web_chat_stack import DevStack, serious_violations
from tests.e2e.web_chat_steps import sign_in

SECRET = "tg-secret-token-for-tests"


@pytest.fixture(scope="module")
def telegram() -> Iterator[FakeTelegram]:
    with running_fake_telegram() as fake:
        yield fake


@pytest.fixture(scope="module")
def web_env(telegram: FakeTelegram) -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": "0", "PA_TELEGRAM_API_URL": telegram.base_url}


def _code(web: DevStack, telegram: FakeTelegram) -> str:
    with web.api(web.token()) as api:
        put = api.put("/api/v1/admin/channels/telegram", json={"bot_token": "1:web", "secret_token": SECRET})
        assert put.status_code == 200, put.text
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET}
    sent = httpx.post(
        f"{web.url}/api/v1/channels/telegram/acme", content=telegram_message(1, 4242, 4242, "hi"), headers=headers
    )
    assert sent.status_code == 200, sent.text
    telegram.wait_for(lambda calls: any(m == "sendMessage" for m, _ in calls))
    found = re.search(r"\b([A-Z2-9]{8})\b", str(telegram.of("sendMessage")[-1]["text"]))
    assert found is not None
    return found.group(1)


def test_a_member_connects_a_telegram_account_with_its_code(page: Any, web: DevStack, telegram: FakeTelegram) -> None:
    from playwright.sync_api import expect

    code = _code(web, telegram)
    sign_in(page)
    page.goto("/settings")
    section = page.get_by_test_id("channel-links")
    expect(section.get_by_text("No connected accounts.")).to_be_visible()
    section.get_by_label("Code").fill("WRONG234")
    section.get_by_role("button", name="Connect").click()
    expect(section.get_by_role("alert")).to_contain_text("unknown, used or expired")
    section.get_by_label("Code").fill(code.lower())  # typed as it comes: the code is not case-sensitive
    section.get_by_role("button", name="Connect").click()
    expect(section.get_by_role("status")).to_have_text("Account connected.")
    expect(section.get_by_role("list", name="Connected accounts")).to_contain_text("Telegram: @tess")
    assert not serious_violations(page)
    section.get_by_role("button", name=re.compile("^Disconnect")).click()
    expect(section.get_by_text("No connected accounts.")).to_be_visible()
