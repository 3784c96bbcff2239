"""Offboarding in the admin console (issue 38), headless Chromium against a `pa dev` stack: an org admin removes a
member from the members page, the removed member stays listed with an "Erase data" button, and erasing says what
went; the member's chat is gone and the erase is recorded, while the admin's own chat stays."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.web_chat_stack import DevStack, serious_violations
from tests.e2e.web_chat_steps import sign_in

pytestmark = pytest.mark.timeout(300)


def test_an_admin_removes_a_member_then_erases_their_data(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with web.api(web.token(user="zed", role="user")) as zed, web.api(web.token()) as alice:
        zed_id = zed.get("/api/v1/me").json()["user_id"]
        made = zed.post("/api/v1/chats", json={"title": "Zed's handover"})
        assert made.status_code == 201, made.text
        kept = alice.post("/api/v1/chats", json={"title": "Alice's plans"})
        assert kept.status_code == 201, kept.text

        sign_in(page)
        page.goto("/admin/members")
        expect(page.locator('[data-ready="true"]').first).to_be_attached()
        row = page.get_by_test_id("members").get_by_role("row").filter(has_text="zed")
        expect(row.get_by_role("button", name=re.compile("^Erase"))).to_have_count(0)  # not while active
        row.get_by_role("button", name=re.compile("^Remove")).click()
        page.get_by_role("dialog").get_by_role("button", name="Remove").click()
        expect(row).to_contain_text("removed")

        row.get_by_role("button", name=re.compile("^Erase")).click()
        dialog = page.get_by_role("dialog")
        expect(dialog).to_contain_text("deleted for good")
        assert not serious_violations(page)
        dialog.get_by_role("button", name="Erase", exact=True).click()
        expect(page.get_by_test_id("erase-notice")).to_contain_text("1 chats")

        erasures = alice.get("/api/v1/org/erasures").json()["items"]
        assert [(e["user_id"], e["chats"]) for e in erasures] == [(zed_id, 1)]
        assert alice.get(f"/api/v1/chats/{kept.json()['id']}").status_code == 200
        assert alice.post(f"/api/v1/org/members/{zed_id}/enable").status_code == 200
        assert zed.get(f"/api/v1/chats/{made.json()['id']}").status_code == 404
