"""Feedback, the trace view and the evaluation comparison in the web chat (issue 37): a thumbs down with a comment
on an answer stays pressed after a reload and reaches the admin's feedback page; the answer's Trace link shows what
the model was sent; two evaluation runs side by side on the admin console."""

from __future__ import annotations

import time
from typing import Any

from tests.e2e.web_chat_stack import DevStack, describe_violations, screenshot, serious_violations
from tests.e2e.web_chat_steps import new_chat, reply, send, sign_in


def _eval(api: Any, dataset: str) -> str:
    body = {"dataset": dataset, "model": "offline:demo", "budget_usd": 1, "scorers": [{"kind": "contains"}]}
    accepted = api.post("/api/v1/evals/runs", json=body)
    assert accepted.status_code == 202, accepted.text
    eval_id = str(accepted.json()["id"])
    deadline = time.monotonic() + 120
    while api.get(f"/api/v1/evals/runs/{eval_id}").json()["status"] in ("queued", "running"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return eval_id


def test_thumbs_on_an_answer_persist_the_trace_shows_what_was_sent_and_evals_compare(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    send(page, "Tell me about otters")
    expect(reply(page)).to_have_attribute("data-streaming", "false")
    actions = page.get_by_test_id("answer-actions").last
    actions.get_by_test_id("thumbs-down").click()
    page.get_by_test_id("feedback-comment").fill("too vague")
    page.get_by_test_id("feedback-send").click()
    expect(actions.get_by_test_id("thumbs-down")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_role("status").filter(has_text="Comment saved")).to_have_count(1)

    page.reload()
    actions = page.get_by_test_id("answer-actions").last
    expect(actions.get_by_test_id("thumbs-down")).to_have_attribute("aria-pressed", "true")
    expect(actions.get_by_test_id("thumbs-up")).to_have_attribute("aria-pressed", "false")
    screenshot(page, "answer-feedback")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)

    with web.api(web.token()) as api:
        kept = api.post("/api/v1/evals/datasets", json={"name": "from chats"}).json()["id"]
    actions.get_by_test_id("answer-trace").click()
    trace = page.get_by_test_id("run-trace")
    expect(trace.get_by_test_id("trace-request").first).to_be_visible()
    expect(trace.get_by_test_id("trace-sent").filter(has_text="Tell me about otters").first).to_be_visible()
    expect(trace.get_by_test_id("trace-response").first).to_contain_text("You said")
    screenshot(page, "run-trace")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)

    # "Add this conversation to a dataset": the question becomes a case, the answer its reference.
    page.get_by_test_id("dataset-picker").select_option(kept)
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_test_id("add-to-dataset").get_by_role("status")).to_have_text("Added to from chats (1 cases)")
    with web.api(web.token()) as api:
        case = api.get(f"/api/v1/evals/datasets/{kept}").json()["items"][0]
    assert case["input"] == "Tell me about otters" and "You said" in (case["expected"] or "")

    page.goto("/admin/feedback")
    item = page.get_by_test_id("feedback-item")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("too vague")
    expect(page.get_by_test_id("satisfaction-row")).to_contain_text("0%")

    violations = serious_violations(page)
    assert not violations, describe_violations(violations)

    with web.api(web.token()) as api:
        cases = [{"input": "say otter", "expected": "otter"}, {"input": "say beaver", "expected": "platypus"}]
        dataset = api.post("/api/v1/evals/datasets", json={"name": "animals", "cases": cases}).json()["id"]
        first = _eval(api, dataset)
    page.goto("/admin/evals")
    expect(page.get_by_test_id("eval-run")).to_have_count(1)
    # The second evaluation started from the console, as an admin would.
    form = page.get_by_test_id("start-eval")
    form.get_by_label("Dataset").select_option(dataset)
    form.get_by_label("Agent or model").fill("offline:demo")
    form.get_by_role("button", name="Start evaluation").click()
    expect(form.get_by_role("status")).to_contain_text("Started")
    expect(page.get_by_test_id("eval-run")).to_have_count(2)
    with web.api(web.token()) as api:
        second = next(r["id"] for r in api.get("/api/v1/evals/runs").json()["items"] if r["id"] != first)
        deadline = time.monotonic() + 120
        while api.get(f"/api/v1/evals/runs/{second}").json()["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
    page.get_by_test_id("compare-a").select_option(first)
    page.get_by_test_id("compare-b").select_option(second)
    page.get_by_role("button", name="Compare").click()
    rows = page.get_by_test_id("comparison-row")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("say otter")
    expect(rows.first.locator("td").nth(1)).to_have_text("1.00")
    expect(rows.nth(1).locator("td").nth(1)).to_have_text("0.00")
    expect(page.get_by_test_id("comparison-total")).to_contain_text("0 changed")
    screenshot(page, "eval-comparison")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)
