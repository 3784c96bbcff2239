"""Projects in the web chat (issue 38), headless Chromium against a `pa dev` stack: alice makes a project on the
Projects page, gives it instructions, adds bob as a viewer, moves a chat into it from the chat list and filters the
list by it; bob, at phone width, picks the project in his chat list and reads alice's chat (a notice where the
composer would be, no edit or regenerate), follows her run there live while it waits for her approval and sees its
answer once she approves, and cannot change the project."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.web_browser import PHONE, assert_fits, open_page
from tests.e2e.web_chat_stack import DevStack, screenshot
from tests.e2e.web_chat_steps import reply, send, sign_in

pytestmark = pytest.mark.timeout(300)
TITLE = re.compile("hello from the launch plan", re.IGNORECASE)  # the chat is named after its first message


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": "0"}


def _sign_in_as(page: Any, user: str) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    expect(page.get_by_role("heading", name="Dev login")).to_be_visible()
    page.get_by_label("User", exact=True).fill(user)
    page.get_by_label("Role").select_option("user")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("who")).to_contain_text(user)


def test_a_project_groups_chats_for_its_members(page: Any, browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with web.api(web.token(user="bob", role="user")) as bob_api:  # bob has signed in once: a member of acme
        bob_id = bob_api.get("/api/v1/me").json()["user_id"]

    sign_in(page)
    page.get_by_role("button", name="New chat", exact=True).click()
    send(page, "hello from the launch plan")
    expect(reply(page)).to_have_count(1)

    page.get_by_role("link", name="Projects", exact=True).click()
    page.get_by_label("New project's name").fill("Launch")
    page.get_by_role("button", name="Create project").click()
    editor = page.get_by_test_id("project-editor")
    expect(editor.get_by_role("heading", name="Launch")).to_be_visible()
    editor.get_by_label("Instructions").fill("Answer as the launch team.")
    editor.get_by_role("button", name="Save", exact=True).click()
    expect(editor.get_by_role("status")).to_have_text("Saved")
    editor.get_by_label("Member's e-mail or user id").fill(bob_id)
    editor.get_by_label("Role").select_option("viewer")
    editor.get_by_role("button", name="Add member").click()
    expect(editor.get_by_test_id("project-member")).to_have_count(2)
    expect(editor.get_by_test_id("project-member").filter(has_text="viewer")).to_have_count(1)
    screenshot(page, "projects-page")

    page.get_by_role("link", name="Chats", exact=True).click()
    page.get_by_role("button", name="Move hello from the launch plan to a project").click()
    page.get_by_test_id("move-project").select_option(label="Launch")
    page.get_by_role("button", name="Move", exact=True).click()
    page.get_by_test_id("project-filter").select_option(label="Launch")
    expect(page.get_by_test_id("chat-item")).to_have_count(1)
    expect(page.get_by_test_id("chat-item")).to_contain_text(TITLE)

    # Alice's next run waits for her approval: bob, opening the chat meanwhile, follows it live.
    page.get_by_test_id("chat-item").first.get_by_role("link").click()
    send(page, "Please send the launch plan to the team", mode="durable")
    approval = page.get_by_test_id("approval-card")
    expect(approval).to_contain_text("waiting for you", timeout=30_000)

    with open_page(browser, web.url, PHONE, is_mobile=True, has_touch=True) as bob:
        _sign_in_as(bob, "bob")
        bob.get_by_role("button", name="Chats").first.click()  # the drawer with the chat list, at phone width
        bob.get_by_test_id("project-filter").select_option(label="Launch")
        expect(bob.get_by_test_id("chat-item")).to_contain_text(TITLE)
        bob.get_by_test_id("chat-item").first.get_by_role("link").click()
        expect(bob.get_by_test_id("user-message").first).to_contain_text("hello from the launch plan")
        # A viewer reads: a notice instead of the composer, no edit, regenerate or share.
        expect(bob.get_by_test_id("read-only-notice")).to_be_visible()
        expect(bob.get_by_role("textbox", name="Message")).to_have_count(0)
        expect(bob.get_by_test_id("edit-message")).to_have_count(0)
        expect(bob.get_by_test_id("regenerate")).to_have_count(0)
        expect(bob.get_by_test_id("share-chat")).to_have_count(0)
        live = bob.get_by_test_id("approval-card")  # alice's run, from its live stream
        expect(live).to_be_visible()
        assert_fits(bob, "project-chat-phone")
        answers = bob.get_by_test_id("assistant-message").count()
        approval.get_by_role("button", name="Approve").click()
        expect(approval).to_contain_text("approved")
        expect(bob.get_by_test_id("assistant-message")).not_to_have_count(answers, timeout=60_000)
        expect(bob.get_by_test_id("assistant-message").last).to_contain_text("Done")
        bob.goto("/projects")
        bob.get_by_role("link", name="Launch").click()
        viewer = bob.get_by_test_id("project-editor")
        expect(viewer.get_by_label("Instructions")).to_be_disabled()
        expect(viewer.get_by_role("button", name="Add member")).to_have_count(0)
        assert_fits(bob, "projects-phone")
