"""Sub-agents in the web chat, in a real browser against a `pa dev` stack: the offline demo model delegates
(`/tool delegate {...}`), and the chat shows a live, collapsible card for the sub-agent with its own tool calls
and its answer, while it works and after the run ended."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.web_chat_stack import (
    DevStack,
    describe_violations,
    screenshot,
    serious_violations,
)

pytestmark = pytest.mark.timeout(240)
UUID_PATH = re.compile(r"/chats/[0-9a-f-]{36}$")


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    # 150 ms a word: the sub-agent's answer streams for several seconds, so the card is seen while it works.
    return {"PA_DEMO_DELAY_MS": "150"}


def test_a_delegating_run_shows_a_live_sub_agent_card_with_its_tool_calls_and_answer(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("who")).to_contain_text("acme")
    page.get_by_role("button", name="New chat", exact=True).click()  # the landing composer: saved on first send
    page.get_by_role("textbox", name="Message").fill('/tool delegate {"task": "what time is it?", "preset": "explore"}')
    page.get_by_role("button", name="Send", exact=True).click()
    page.wait_for_url(UUID_PATH)

    card = page.get_by_test_id("subagent-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("subagent-task")).to_have_text("what time is it?")
    expect(card.get_by_test_id("subagent-status")).to_have_text("working…")  # live: the child is still going
    expect(card.get_by_test_id("tool-call").filter(has_text="current_time")).to_be_visible()  # its own tool call
    expect(card.get_by_test_id("subagent-answer").last).to_contain_text("You said")  # its answer, streaming in
    screenshot(page, "web-subagent-working")
    expect(card.get_by_test_id("subagent-status")).to_have_text("succeeded")
    expect(page.get_by_test_id("assistant-message").filter(has_text="delegate returned")).to_be_visible()
    expect(card).to_have_attribute("data-status", "succeeded")  # kept after the run ended

    card.locator(":scope > summary").click()  # collapsible
    expect(card.get_by_test_id("subagent-answer").last).to_be_hidden()
    card.locator(":scope > summary").click()
    expect(card.get_by_test_id("subagent-answer").last).to_contain_text("The time is")
    violations = serious_violations(page)
    assert violations == [], describe_violations(violations)
    screenshot(page, "web-subagent-done")
