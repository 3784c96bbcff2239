"""A two-person approval in a real browser against a `pa dev` stack (issue 33 item 5): a `quorum: 2` rule asks about
bob's call; carol approves first over the API; alice's approvals inbox shows "1 of 2 approvals — approved by carol"
on the card; alice's approval completes it. No serious axe violation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.web_chat_stack import DevStack, serious_violations
from tests.e2e.web_chat_steps import sign_in

pytestmark = pytest.mark.timeout(300)


def _until_paused_or_done(http: Any, url: str) -> list[dict[str, Any]]:
    """The run's events until RUN_FINISHED (its end, or its pause for a person) or RUN_ERROR."""
    events: list[dict[str, Any]] = []
    with http.stream("GET", url) as stream:
        assert stream.status_code == 200
        for line in stream.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
                if events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    break
    return events


def test_the_inbox_card_counts_the_approvals_of_a_two_person_rule(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    alice = web.api(web.token())
    bob = web.api(web.token(user="bob", role="user"))
    carol = web.api(web.token(user="carol", role="admin"))
    rule = {"tool": "send_demo_message", "effect": "ask", "quorum": 2, "reason": "two people send to everyone"}
    created = alice.post("/api/v1/admin/tool-policies", json=rule)
    assert created.status_code == 201, created.text
    try:
        chat = bob.post("/api/v1/chats", json={"title": "two people"}).json()
        message = "/tool send_demo_message " + json.dumps({"to": "everyone", "text": "release at 5"})
        body = {"message": message, "mode": "inline", "model": "offline:demo", "tools": ["send_demo_message"]}
        started = bob.post(f"/api/v1/chats/{chat['id']}/runs", json=body)
        assert started.status_code == 202, started.text
        events = _until_paused_or_done(bob, started.json()["events_url"])
        asked = [e["value"] for e in events if e.get("name") == "approval_requested"]
        approval_id = asked[0]["approval_id"]
        first = carol.post(f"/api/v1/approvals/{approval_id}", json={"decision": "approve"})
        assert first.status_code == 200 and first.json()["status"] == "pending", first.text
        carol_name = first.json()["approved_by"][0]["name"]

        sign_in(page)
        page.goto("/approvals")
        card = page.locator('[data-testid="approval-card"]:has-text("send_demo_message")')
        expect(card).to_have_count(1)
        expect(card.get_by_test_id("approval-quorum")).to_have_text(
            f"Needs two people: 1 of 2 approvals — approved by {carol_name}"
        )
        assert not serious_violations(page)
        card.get_by_role("button", name="Approve").click()
        expect(page.locator('[data-testid="approval-card"]:has-text("send_demo_message")')).to_have_count(0)
        decided = alice.get("/api/v1/approvals", params={"status": "approved"}).json()["items"]
        mine = next(a for a in decided if a["id"] == approval_id)
        assert (mine["quorum"], len(mine["approved_by"])) == (2, 2)
    finally:
        alice.delete(f"/api/v1/admin/tool-policies/{created.json()['id']}")
