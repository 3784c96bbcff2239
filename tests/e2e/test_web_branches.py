"""Edit and branch in the web chat (headless Chromium against a `pa dev` stack; the offline demo model answers
"You said: …"): edit a message to start a new branch, switch between branches with ‹ 1 / 2 ›, regenerate an
answer and switch between the answers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.web_chat_stack import (
    describe_violations,
    screenshot,
    serious_violations,
)
from tests.e2e.web_chat_steps import new_chat, reply, send, sign_in

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": "10"}


def users(page: Any) -> list[str]:
    return [t.strip() for t in page.get_by_test_id("user-message").all_inner_texts()]


def test_edit_a_message_switch_branches_and_regenerate(page: Any) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    send(page, "first question")
    expect(reply(page)).to_have_count(1)
    # The answer has ended before the next message (one typed during an answer is queued after it: another test).
    expect(page.get_by_test_id("stop-run")).to_be_hidden()
    send(page, "second question")
    expect(reply(page)).to_have_count(2)
    expect(page.get_by_test_id("branch-switch")).to_have_count(0)  # one version of everything: no switcher

    # Edit the first message: a new branch from the chat's start, with its own answer.
    page.get_by_test_id("edit-message").first.click()
    page.get_by_test_id("edit-input").fill("edited question")
    page.get_by_test_id("edit-send").click()
    expect(reply(page).last).to_contain_text("edited question")
    expect(page.get_by_test_id("user-message")).to_have_count(1)
    assert users(page)[0].endswith("edited question")
    position = page.get_by_test_id("branch-position")
    expect(position).to_have_text("2 / 2")
    screenshot(page, "branch-edited")

    # ‹ back to the first branch: both of its turns; › forward again.
    page.get_by_test_id("branch-prev").click()
    expect(page.get_by_test_id("user-message")).to_have_count(2)
    expect(page.get_by_test_id("user-message").first).to_contain_text("first question")
    expect(page.get_by_test_id("user-message").last).to_contain_text("second question")
    expect(position.first).to_have_text("1 / 2")
    page.get_by_test_id("branch-next").click()
    expect(page.get_by_test_id("user-message")).to_have_count(1)
    expect(page.get_by_test_id("user-message")).to_contain_text("edited question")

    # Regenerate the answer: a second answer to the same message, and ‹ 1 / 2 › between the answers.
    page.get_by_test_id("regenerate").click()
    answer_switch = page.get_by_test_id("turn-tools").filter(has=page.get_by_test_id("regenerate"))
    expect(answer_switch.get_by_test_id("branch-position")).to_have_text("2 / 2")
    expect(reply(page)).to_have_count(1)
    expect(page.get_by_test_id("user-message")).to_have_count(1)  # no new user turn
    answer_switch.get_by_test_id("branch-prev").click()
    expect(answer_switch.get_by_test_id("branch-position")).to_have_text("1 / 2")
    expect(reply(page)).to_contain_text("edited question")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)

    # A reload shows the branch written last (the regenerated answer).
    page.reload()
    expect(page.get_by_test_id("turn-tools").filter(has=page.get_by_test_id("regenerate"))).to_contain_text("2 / 2")
