"""Projects in the web chat (issue 38), headless Chromium against a `pa dev` stack: alice makes a project on the
Projects page, gives it instructions, adds bob as a viewer, moves a chat into it from the chat list and filters the
list by it; bob, at phone width, picks the project in his chat list and reads alice's chat, and cannot change the
project."""

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

    with open_page(browser, web.url, PHONE, is_mobile=True, has_touch=True) as bob:
        _sign_in_as(bob, "bob")
        bob.get_by_role("button", name="Chats").first.click()  # the drawer with the chat list, at phone width
        bob.get_by_test_id("project-filter").select_option(label="Launch")
        expect(bob.get_by_test_id("chat-item")).to_contain_text(TITLE)
        bob.get_by_test_id("chat-item").first.get_by_role("link").click()
        expect(bob.get_by_test_id("user-message")).to_contain_text("hello from the launch plan")
        assert_fits(bob, "project-chat-phone")
        bob.goto("/projects")
        bob.get_by_role("link", name="Launch").click()
        viewer = bob.get_by_test_id("project-editor")
        expect(viewer.get_by_label("Instructions")).to_be_disabled()
        expect(viewer.get_by_role("button", name="Add member")).to_have_count(0)
        assert_fits(bob, "projects-phone")
