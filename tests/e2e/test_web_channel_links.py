"""Channels in the web chat (issue 34): an admin sets up the org's Telegram bot (secrets write-only); a Telegram
message from someone not yet linked gets a one-time code from the bot (a fake Bot API on loopback); the member enters
it under Settings -> Channels and sees the account connected (then disconnects it); a wrong code is refused with the
reason; the admin's log shows the message as `unlinked`. Checked with axe."""

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

    sign_in(page)  # an admin of acme
    page.goto("/settings")
    org = page.get_by_test_id("org-channels")
    bot = org.get_by_role("group", name="Telegram")
    bot.get_by_label("Bot token").fill("1:web-bot-token")
    bot.get_by_label("Secret token").fill(SECRET)
    bot.get_by_role("button", name="Save Telegram").click()
    expect(org.get_by_role("status")).to_have_text("Telegram saved.")
    expect(bot).to_contain_text("Set up: acme (bot_token, secret_token stored)")
    expect(bot.get_by_label("Secret token")).to_have_value("")  # write-only: never shown again
    assert SECRET not in page.content() and "web-bot-token" not in page.content()

    code = _code(web, telegram)
    page.reload()
    expect(page.get_by_test_id("org-channels").get_by_role("table")).to_contain_text("unlinked")
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


def test_an_admin_limits_who_may_use_a_channel_and_installs_slack_from_the_page(page: Any, web: DevStack) -> None:
    """The allow-list is set on the channel's form and read back after a reload; "Install to Slack" asks the API for
    Slack's authorize address (on `pa dev` without a Slack app: the reason, shown)."""
    from playwright.sync_api import expect

    sign_in(page)
    page.goto("/settings")
    org = page.get_by_test_id("org-channels")
    mail = org.get_by_role("group", name="E-mail")
    mail.get_by_label("Inbound address").fill("agent@acme.example")
    mail.get_by_test_id("allow-email-org-admin").check()
    mail.get_by_role("button", name="Save E-mail").click()
    expect(org.get_by_role("status")).to_have_text("E-mail saved.")
    page.reload()
    mail = page.get_by_test_id("org-channels").get_by_role("group", name="E-mail")
    expect(mail.get_by_test_id("allow-email-org-admin")).to_be_checked()
    expect(mail.get_by_test_id("allow-email-user")).not_to_be_checked()  # read back from the server after a reload
    org = page.get_by_test_id("org-channels")
    org.get_by_test_id("install-slack").click()
    expect(org.get_by_role("alert")).to_contain_text("Slack")
    assert not serious_violations(page)
