"""The admin console's tool rule editor in a real browser against a `pa dev` stack (issue 33): a rule whose CEL does
not parse is refused with the error's position and nothing is added; rules are added, reordered with the keyboard
reachable Up/Down buttons, switched to log-only and back; a run whose call a log-only rule matches shows in the
report as what the rule would have done; no serious axe violation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.web_chat_stack import DevStack, serious_violations
from tests.e2e.web_chat_steps import sign_in

pytestmark = pytest.mark.timeout(300)


def _add(page: Any, tool: str, when: str, effect: str, *, reason: str = "", log_only: bool = False) -> None:
    page.get_by_label("Tool (name or glob)").fill(tool)
    page.get_by_label("When (CEL)").fill(when)
    page.get_by_label("Effect").select_option(effect)
    page.get_by_label("Reason").fill(reason)
    page.get_by_label("Log only (try it first)").set_checked(log_only)
    page.get_by_role("button", name="Add rule").click()


def _rules(api: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = api.get("/api/v1/admin/tool-policies").json()["items"]
    return items


def _follow(http: Any, url: str) -> list[dict[str, Any]]:
    """The run's events until RUN_FINISHED (its end, or its pause for a person: the stream itself stays open while
    the run waits) or RUN_ERROR."""
    events: list[dict[str, Any]] = []
    with http.stream("GET", url) as stream:
        assert stream.status_code == 200
        for line in stream.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
                if events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    break
    return events


def test_an_admin_writes_orders_and_tries_rules_and_reads_the_report(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    api = web.api(web.token())
    sign_in(page)
    page.goto("/admin/tool-policies")
    expect(page.locator('section[data-ready="true"]')).to_be_attached()

    _add(page, "send_demo_message", "args.to ==", "deny")
    expect(page.get_by_test_id("policy-error")).to_contain_text("line 1, column")
    assert _rules(api) == []

    _add(page, "send_demo_message", 'args.to == "everyone"', "deny", reason="no broadcasts")
    expect(page.get_by_test_id("policy-row")).to_have_count(1)
    _add(page, "send_demo_*", "true", "ask", log_only=True)
    rows = page.get_by_test_id("policy-row")
    expect(rows).to_have_count(2)
    expect(rows.nth(1).get_by_test_id("policy-tool")).to_have_text("send_demo_*")

    page.get_by_role("button", name="Move rule 2 for send_demo_* up").click()
    expect(rows.nth(0).get_by_test_id("policy-tool")).to_have_text("send_demo_*")
    assert [r["tool"] for r in _rules(api)] == ["send_demo_*", "send_demo_message"]
    page.get_by_role("button", name="Move rule 1 for send_demo_* down").click()
    expect(rows.nth(1).get_by_test_id("policy-tool")).to_have_text("send_demo_*")

    toggle = page.get_by_label("Log only: rule 2 for send_demo_*")
    expect(toggle).to_be_checked()
    note = page.get_by_test_id("policy-note")
    toggle.uncheck()
    expect(note).to_have_text("Rule for send_demo_* is enforced now.")
    expect(toggle).not_to_be_checked()
    assert [r["log_only"] for r in _rules(api)] == [False, False]
    toggle.check()
    expect(note).to_have_text("Rule for send_demo_* only logs now.")
    assert [r["log_only"] for r in _rules(api)] == [False, True]

    # A call the log-only rule matches runs (the demo tool acts; the demo model calls it for `/tool NAME {json}`).
    chat = api.post("/api/v1/chats", json={"title": "policies"}).json()
    message = "/tool send_demo_message " + json.dumps({"to": "the team", "text": "standup at 10"})
    body = {"message": message, "mode": "inline", "model": "offline:demo", "tools": ["send_demo_message"]}
    started = api.post(f"/api/v1/chats/{chat['id']}/runs", json=body)
    assert started.status_code == 202, started.text
    events = _follow(api, started.json()["events_url"])
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]

    page.reload()
    report = page.get_by_test_id("report-row")
    expect(report).to_have_count(1)
    expect(report.get_by_test_id("report-would-have")).to_have_text("ask a person: 1")
    assert not serious_violations(page)

    page.get_by_role("button", name="Delete rule 1 for send_demo_message").click()
    expect(rows).to_have_count(1)
