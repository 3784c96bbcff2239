"""The web chat on a phone (390 × 844) in headless Chromium against a `pa dev` stack: no page scrolls
sideways, the chat list is a drawer, and the composer's Send button stays on screen and works."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.web_browser import PHONE, assert_fits, open_page
from tests.e2e.web_chat_stack import DevStack, screenshot
from tests.e2e.web_chat_steps import new_chat, reply, send, sign_in

pytestmark = pytest.mark.timeout(240)

# Every signed-in page and what shows once its data has loaded (the admin console's pages mark `data-ready`).
READY = '[data-ready="true"]'
PAGES: dict[str, str] = {
    "/approvals": '[data-testid="no-approvals"], [data-testid="approval-card"]',
    "/usage": '[data-testid="usage-by-model"]',
    "/settings": "#default-model option",
    "/admin": READY,
    "/admin/models": READY,
    "/admin/budgets": READY,
    "/admin/org": READY,
    "/admin/members": READY,
    "/admin/workflows": READY,
    "/admin/audit": READY,
    "/no-such-page": 'h1:has-text("Page not found")',
}


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": "20"}


@pytest.fixture
def phone(browser: Any, web: DevStack) -> Iterator[Any]:
    with open_page(browser, web.url, PHONE, is_mobile=True, has_touch=True) as tab:
        yield tab


def test_the_chat_fits_a_phone_with_the_list_in_a_drawer_and_send_on_screen(phone: Any) -> None:
    from playwright.sync_api import expect

    phone.goto("/login")
    expect(phone.get_by_role("heading", name="Dev login")).to_be_visible()
    assert_fits(phone, "login")
    sign_in(phone)
    assert_fits(phone, "chats")

    # The chat list is a drawer: closed, it takes no room and its buttons cannot be reached.
    toggle = phone.get_by_role("button", name="Chats")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(phone.get_by_role("button", name="New chat", exact=True)).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(phone.get_by_role("button", name="New chat", exact=True)).to_be_in_viewport()
    assert_fits(phone, "drawer open")
    chat_id = new_chat(phone)  # picking a chat closes the drawer
    expect(phone.get_by_role("button", name="New chat", exact=True)).to_be_hidden()

    composer = phone.get_by_role("textbox", name="Message")
    button = phone.get_by_role("button", name="Send", exact=True)
    expect(composer).to_be_in_viewport()
    phone.get_by_role("textbox", name="Message").fill("A long question " + "with many words " * 40)
    expect(button).to_be_in_viewport(ratio=1)
    box = button.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    assert box["y"] + box["height"] <= PHONE["height"], box
    assert_fits(phone, "composer filled")

    send(phone, "Hello from a phone " + "x" * 120)  # a long unbroken word must wrap, not widen the page
    expect(reply(phone)).to_contain_text("real model")
    expect(phone.get_by_test_id("user-message").last).to_contain_text("Hello from a phone")
    expect(button).to_be_in_viewport(ratio=1)
    expect(composer).to_be_in_viewport()
    assert_fits(phone, "chat with a reply")
    screenshot(phone, "mobile-chat")

    # The drawer lists the chat, and its search finds words said in the chat (not in its title).
    toggle.click()
    expect(phone.get_by_test_id("chat-item").first).to_be_in_viewport()
    phone.get_by_role("searchbox", name="Search chats").fill("phone")
    expect(phone.get_by_test_id("chat-item")).to_have_count(1)
    expect(phone.get_by_test_id("chat-snippet")).to_contain_text("phone")
    assert_fits(phone, "drawer search")
    phone.keyboard.press("Escape")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    assert chat_id in phone.url


def test_every_page_fits_a_phone(phone: Any) -> None:
    from playwright.sync_api import expect

    sign_in(phone)
    for path, ready in PAGES.items():
        phone.goto(path)
        expect(phone.locator(ready).first).to_be_attached()
        assert_fits(phone, path)
    screenshot(phone, "mobile-admin")
