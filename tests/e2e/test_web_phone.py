"""The web chat on a phone (390 × 844), light and dark: the conversation gets most of the screen (the navigation is a
menu behind one button, the chat list a drawer), the model picker shows its whole choice, no copy points "on the left",
and no page scrolls past the screen. The screenshot goes to docs/screenshots/phone.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.web_browser import PHONE, assert_fits, open_page
from tests.e2e.web_chat_stack import ROOT, DevStack, describe_violations, serious_violations
from tests.e2e.web_chat_steps import UUID_PATH, sign_in

pytestmark = pytest.mark.timeout(240)

SCREENSHOTS = ROOT / "docs" / "screenshots"

PAGES: dict[str, str] = {
    "/knowledge": "h1",
    "/approvals": '[data-testid="no-approvals"], [data-testid="approval-card"]',
    "/usage": '[data-testid="usage-by-model"]',
    "/settings": "#default-model option",
    "/admin": '[data-ready="true"]',
    "/admin/models": '[data-ready="true"]',
}

# The transcript's height over the screen's.
SHARE_JS = """() => document.querySelector('[data-testid="transcript"]').getBoundingClientRect().height / innerHeight"""

# Whether the model picker's chosen label fits the box it is shown in (text width against the select's content box,
# less its drop-down arrow).
PICKER_FITS_JS = """() => {
  const select = document.querySelector('[data-testid="model-picker"]');
  const style = getComputedStyle(select);
  const context = document.createElement('canvas').getContext('2d');
  context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const text = select.selectedOptions[0].textContent.trim();
  const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 16;
  return { text, width: Math.ceil(context.measureText(text).width), room: Math.floor(room) };
}"""


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": "0"}


@pytest.fixture(params=["light", "dark"])
def phone(request: pytest.FixtureRequest, browser: Any, web: DevStack) -> Iterator[Any]:
    errors: list[str] = []
    with open_page(browser, web.url, PHONE, is_mobile=True, has_touch=True, color_scheme=request.param) as tab:
        tab.on("console", lambda m: errors.append(f"{m.type}: {m.text}") if m.type == "error" else None)
        yield tab
    assert not errors, f"console errors: {errors}"


def test_the_conversation_gets_most_of_a_phone_screen(phone: Any) -> None:
    from playwright.sync_api import expect

    sign_in(phone)
    assert not phone.get_by_text("on the left").count()
    # The landing page starts at its top (its heading not cut off above, nor under the Chats button).
    heading = phone.get_by_role("heading", name="What can I help with?")
    expect(heading).to_be_in_viewport(ratio=1)
    chats_button = phone.get_by_role("button", name="Chats").bounding_box()
    heading_box = heading.bounding_box()
    assert chats_button and heading_box and heading_box["y"] >= chats_button["y"] + chats_button["height"], heading_box

    # The navigation is one row: a Menu button that opens the links (and closes on a pick).
    menu = phone.get_by_role("button", name="Menu")
    main_nav = phone.get_by_role("navigation", name="Main")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(main_nav).to_be_hidden()
    header = phone.locator("header.topbar").bounding_box()
    assert header is not None and header["height"] <= 48, header
    menu.click()
    expect(main_nav.get_by_role("link", name="Usage")).to_be_in_viewport()
    assert_fits(phone, "menu open")
    found = serious_violations(phone)
    assert not found, describe_violations(found)
    phone.keyboard.press("Escape")
    expect(main_nav).to_be_hidden()
    expect(menu).to_be_focused()

    box = phone.get_by_role("textbox", name="Message")
    box.fill("Hello from a phone")
    phone.get_by_role("button", name="Send", exact=True).click()
    phone.wait_for_url(UUID_PATH)
    expect(phone.get_by_test_id("answer-details").last).to_be_visible(timeout=60_000)
    fits = phone.evaluate(PICKER_FITS_JS)  # the model picker shows its whole label
    assert fits["width"] <= fits["room"], fits
    share = phone.evaluate(SHARE_JS)
    assert share >= 0.70, f"the conversation has {share:.0%} of the screen"
    assert_fits(phone, "chat")
    found = serious_violations(phone)
    assert not found, describe_violations(found)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    scheme = phone.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
    phone.screenshot(path=str(SCREENSHOTS / ("phone-dark.png" if scheme else "phone.png")))

    # The menu takes you to a page and closes; no page scrolls past the screen.
    menu.click()
    main_nav.get_by_role("link", name="Knowledge").click()
    phone.wait_for_url("**/knowledge")
    expect(main_nav).to_be_hidden()
    for path, ready in PAGES.items():
        phone.goto(path)
        expect(phone.locator(ready).first).to_be_attached()
        overflow = phone.evaluate("() => document.documentElement.scrollHeight - innerHeight")
        assert overflow == 0, (path, overflow)
        assert_fits(phone, path)
