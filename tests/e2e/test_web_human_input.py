"""Human input in the web chat (issue 33, items 1 and 2) in a real browser against a `pa dev` stack.

- A run asks a question (`ask_user`, the demo model's `/tool` command): the chat shows it as a form (the approvals
  inbox lists it too), the person picks an answer, the run goes on with it; after a reload the question shows with
  its answer (the transcript).
- A follow-up typed while an answer streams is sent (the chat's default policy queues it): it shows as queued under
  the transcript and is answered after the first answer ends, in order.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.e2e.web_chat_stack import DevStack, describe_violations, screenshot, serious_violations
from tests.e2e.web_chat_steps import new_chat, page_token, send, sign_in

pytestmark = pytest.mark.timeout(240)
QUESTION = {"question": "Which environment should I deploy to?", "choices": ["staging", "production"]}


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": "60"}  # a ~60-word answer streams for a few seconds


def test_answering_a_question_form_and_seeing_it_after_a_reload(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with page.expect_response(lambda r: "/api/v1/feed" in r.url):  # the feed is listening
        sign_in(page)
    chat_id = new_chat(page)
    with web.api(page_token(page)) as api:  # the question's run, started as any client would
        started = api.post(
            f"/api/v1/chats/{chat_id}/runs",
            json={"message": f"/tool ask_user {json.dumps(QUESTION)}", "tools": ["ask_user"], "model": "offline:demo"},
        )
        assert started.status_code == 202, started.text
    card = page.get_by_test_id("question-card")
    expect(card).to_have_attribute("data-status", "pending", timeout=30_000)
    expect(card.get_by_test_id("question-text")).to_have_text(QUESTION["question"])
    assert serious_violations(page) == [], describe_violations(serious_violations(page))
    screenshot(page, "question-form")
    chat_url = page.url
    page.goto("/approvals")  # the inbox lists it too
    expect(page.get_by_test_id("inbox-questions").get_by_test_id("question-text")).to_have_text(QUESTION["question"])
    page.goto(chat_url)
    card = page.get_by_test_id("question-card")
    expect(card).to_have_attribute("data-status", "pending")

    card.get_by_role("button", name="Answer").click()  # nothing picked: said, nothing sent
    expect(card.get_by_test_id("question-error")).to_have_text("Pick one of the answers.")
    card.get_by_label("production").check()
    card.get_by_role("button", name="Answer").click()
    expect(card.get_by_test_id("question-answer")).to_have_text("Answer: production")
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_hidden(timeout=60_000)
    expect(page.get_by_test_id("run-error")).to_have_count(0)
    with web.api(page_token(page)) as api:
        run = api.get(f"/api/v1/runs/{started.json()['run_id']}").json()
        pending = api.get("/api/v1/questions").json()["items"]
    assert run["status"] == "succeeded" and pending == []

    page.reload()
    card = page.get_by_test_id("question-card")
    expect(card).to_have_attribute("data-status", "answered")
    expect(card.get_by_test_id("question-answer")).to_have_text("Answer: production")
    screenshot(page, "question-answered")


def test_a_follow_up_typed_while_an_answer_streams_is_queued_and_answered_next(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    send(page, "Tell me a long story about " + " ".join(f"topic{i}" for i in range(40)))
    first = page.get_by_test_id("assistant-message").last
    expect(first).to_have_attribute("data-streaming", "true", timeout=30_000)

    box = page.get_by_role("textbox", name="Message")
    box.fill("And a short follow-up")
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()  # sendable while it streams
    page.get_by_role("button", name="Send", exact=True).click()
    queued = page.get_by_test_id("queued-message")
    expect(queued).to_have_count(1)
    expect(queued).to_contain_text("And a short follow-up")
    expect(box).to_have_value("")
    screenshot(page, "follow-up-queued")

    expect(queued).to_have_count(0, timeout=60_000)  # its turn came
    users = page.get_by_test_id("user-message")
    expect(users).to_have_count(2, timeout=60_000)
    expect(users.nth(1)).to_contain_text("And a short follow-up")
    expect(page.get_by_test_id("assistant-message").filter(has_text=re.compile("short follow-up"))).to_have_count(
        1, timeout=60_000
    )
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_hidden(timeout=60_000)
    screenshot(page, "follow-up-answered")
