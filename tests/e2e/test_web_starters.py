"""The first five minutes, in a real browser against a `pa dev` stack with no model key: the landing page and an
empty chat offer starter prompts, and each one, clicked, shows its capability with the offline demo model — a
knowledge search that cites the uploaded document, a memory saved, the demo MCP server's weather tool, two
sub-agents working in parallel, and an approval card before a message is sent. The chat list shows the title the
first exchange gave each chat; the Usage page says whose figures it shows."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.web_browser import PHONE, assert_fits, open_page
from tests.e2e.web_chat_stack import DevStack, describe_violations, screenshot, serious_violations
from tests.e2e.web_chat_steps import UUID_PATH, page_token, sign_in

pytestmark = pytest.mark.timeout(300)
FACT = "The Zephyr valve must be recalibrated every ninety days by a certified technician."
MARKDOWN = f"# Maintenance\n\n{FACT}\n\n# Warranty\n\nThe warranty covers parts for two years.\n".encode()


def empty_chat(page: Any) -> str:
    """A chat with no message yet (made over the API, as another client would), open in the page."""
    from playwright.sync_api import expect

    made = page.request.post("/api/v1/chats", data={}, headers={"Authorization": f"Bearer {page_token(page)}"})
    assert made.status == 201, made.text()
    chat_id = str(made.json()["id"])
    page.goto(f"/chats/{chat_id}")
    page.wait_for_url(UUID_PATH)
    expect(page.get_by_test_id("starter-prompts")).to_be_visible()
    return chat_id


def start(page: Any, capability: str) -> None:
    """Click the starter prompt of `capability`: it is sent as the chat's first message."""
    from playwright.sync_api import expect

    starter = page.get_by_test_id("starter-prompt").and_(page.locator(f"[data-capability='{capability}']"))
    text = starter.locator(".starter-text").inner_text().strip("“”")
    starter.click()
    expect(page.get_by_test_id("user-message")).to_contain_text(text)
    expect(page.get_by_test_id("starter-prompts")).to_have_count(0)  # the chat is no longer empty


def answer(page: Any) -> Any:
    """The demo model's final answer (signed as the demo)."""
    return page.get_by_test_id("assistant-message").filter(has_text="Demo model (offline)")


def chat_item(page: Any, chat_id: str) -> Any:
    return page.get_by_test_id("chat-item").filter(has=page.locator(f"a[href='/chats/{chat_id}']"))


def upload(page: Any) -> None:
    """A document in the organisation's knowledge, uploaded on the Knowledge page and ingested."""
    from playwright.sync_api import expect

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Knowledge").click()
    page.get_by_label("File").set_input_files({"name": "zephyr.md", "mimeType": "text/markdown", "buffer": MARKDOWN})
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.get_by_test_id("document").filter(has_text="zephyr.md")).to_have_attribute("data-status", "ready")


def test_each_starter_prompt_shows_its_capability_with_the_demo_model(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    # "New chat" opens the landing page (no chat saved yet): its starter prompts, one per capability.
    page.get_by_role("button", name="New chat", exact=True).click()
    landing = page.get_by_test_id("landing")
    expect(landing.get_by_test_id("starter-prompt")).to_have_count(5)
    violations = serious_violations(page)
    assert violations == [], describe_violations(violations)
    screenshot(page, "starter-prompts")

    # The weather, from the landing page: the chat is made, the message sent with the demo MCP server's tool added;
    # its result is in the answer.
    start(page, "mcp")
    page.wait_for_url(UUID_PATH)
    chat_id = str(page.url.rsplit("/", 1)[1])
    card = page.get_by_test_id("tool-call").filter(has_text="demo_weather")
    expect(card).to_have_attribute("data-outcome", "done")
    expect(card.get_by_test_id("tool-source")).to_contain_text("demo")
    expect(answer(page)).to_contain_text("Paris: light rain, 14 °C")
    expect(chat_item(page, chat_id)).to_contain_text("Weather in Paris")  # titled by its first exchange
    expect(page.get_by_test_id("chat-title")).to_have_text("Weather in Paris")  # the open pane's header too

    # After an upload, a question about the documents: a knowledge search, quoted and cited under the answer.
    upload(page)
    chat_id = empty_chat(page)
    start(page, "knowledge")
    search = page.get_by_test_id("tool-call").filter(has_text="search_knowledge")
    expect(search).to_have_attribute("data-outcome", "done")
    expect(answer(page)).to_contain_text(FACT)
    expect(answer(page).get_by_test_id("citation").filter(has_text="zephyr.md")).not_to_have_count(0)
    expect(chat_item(page, chat_id)).to_contain_text("Questions about your documents")
    screenshot(page, "starter-knowledge")

    # "Remember that …": a memory saved, listed by the memories API.
    chat_id = empty_chat(page)
    start(page, "memory")
    expect(page.get_by_test_id("tool-call").filter(has_text="remember")).to_have_attribute("data-outcome", "done")
    expect(answer(page)).to_contain_text("Saved to the user's memories")
    memories = page.request.get("/api/v1/me/memories", headers={"Authorization": f"Bearer {page_token(page)}"})
    assert "I prefer metric units." in [m["text"] for m in memories.json()["items"]], memories.text()
    expect(chat_item(page, chat_id)).to_contain_text("Remember: I prefer metric units")

    # Research in parallel: two sub-agent cards, both succeeded, then the answer that gathers them.
    empty_chat(page)
    start(page, "subagents")
    cards = page.get_by_test_id("subagent-card")
    expect(cards).to_have_count(2)
    expect(cards.get_by_test_id("subagent-task")).to_have_text(["Research solar power", "Research wind power"])
    expect(answer(page)).to_contain_text("All 2 sub-agents finished")
    for status in cards.get_by_test_id("subagent-status").all():
        expect(status).to_have_text("succeeded")
    screenshot(page, "starter-subagents")

    # "Send …": an approval card first; approved, the message goes.
    empty_chat(page)
    start(page, "approval")
    approval = page.get_by_test_id("approval-card")
    expect(approval).to_contain_text("send_demo_message")
    screenshot(page, "starter-approval")
    approval.get_by_role("button", name="Approve", exact=True).click()
    expect(answer(page)).to_contain_text("Done: (demo) message to team@example.com queued")


def test_the_usage_page_says_whose_figures_it_shows(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)  # an admin: the organisation's figures first, their own on request
    page.get_by_role("link", name="Usage", exact=True).click()
    expect(page.get_by_test_id("usage-scope")).to_have_text(re.compile("Showing everyone in acme"))
    page.get_by_label("Whose usage").select_option("me")
    expect(page.get_by_test_id("usage-scope")).to_have_text(re.compile("Showing your own usage only"))
    violations = serious_violations(page)
    assert violations == [], describe_violations(violations)


def test_the_starter_prompts_fit_a_phone_in_the_dark(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with open_page(browser, web.url, PHONE, is_mobile=True, has_touch=True, color_scheme="dark") as phone:
        sign_in(phone)  # the landing page: its starters in one column, the composer still on screen
        starters = phone.get_by_test_id("landing").get_by_test_id("starter-prompt")
        expect(starters).to_have_count(5)
        assert_fits(phone, "landing with starters")
        expect(phone.get_by_role("textbox", name="Message")).to_be_in_viewport()
        starters.last.scroll_into_view_if_needed()
        expect(starters.last).to_be_in_viewport()
        violations = serious_violations(phone)
        assert violations == [], describe_violations(violations)
        screenshot(phone, "starter-prompts-phone-dark")
