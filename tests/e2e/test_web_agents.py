"""Agents in the web chat, in a real browser against a `pa dev` stack with the offline demo model, at desktop and
phone widths: Explore agents (search, mine), create one in the editor with its starter prompts, try it in the pane
beside the form, change its instructions and try the change (saved as a draft version the try chat runs, nothing
published), save another draft, diff two versions, publish the tried one, start a chat with the agent from the
landing page's picker (its starter prompts, its name and version under each answer), roll back to version 1 and see
the next answer come from version 1. axe finds no serious violations and no
page scrolls sideways."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.web_browser import DESKTOP, PHONE, assert_fits, open_page
from tests.e2e.web_chat_stack import DevStack, describe_violations, screenshot, serious_violations
from tests.e2e.web_chat_steps import UUID_PATH, page_token, sign_in

pytestmark = pytest.mark.timeout(300)
AGENT_PATH = re.compile(r"/agents/[0-9a-f-]{36}$")


def check(page: Any, name: str) -> None:
    """axe clean, nothing wider than the screen; a screenshot for the record."""
    violations = serious_violations(page)
    assert violations == [], f"{name}: {describe_violations(violations)}"
    assert_fits(page, name)
    screenshot(page, name)


def nav_to(page: Any, phone: bool, name: str) -> None:
    if phone:
        page.get_by_test_id("menu-toggle").click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True).click()


def answer_agent(scope: Any) -> Any:
    """The detail line's agent and version under the last finished answer."""
    return scope.get_by_test_id("answer-actions").last.get_by_test_id("answer-agent")


def version_row(page: Any, n: int) -> Any:
    return page.get_by_test_id("agent-version").and_(page.locator(f"[data-version='{n}']"))


def agent_api(page: Any, agent_id: str) -> dict[str, Any]:
    got = page.request.get(f"/api/v1/agents/{agent_id}", headers={"Authorization": f"Bearer {page_token(page)}"})
    assert got.status == 200, got.text()
    return dict(got.json())


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_create_try_publish_chat_rollback(browser: Any, web: DevStack, width: str) -> None:
    from playwright.sync_api import expect

    phone = width == "phone"
    name = f"Contract reviewer {width}"
    slug = f"contract-reviewer-{width}"
    starter = f"Review this NDA for risks ({width})"
    with open_page(browser, web.url, PHONE if phone else DESKTOP) as page:
        sign_in(page)
        nav_to(page, phone, "Agents")
        page.wait_for_url(re.compile(r"/agents$"))
        expect(page.get_by_role("heading", name="Agents", level=1)).to_be_visible()
        expect(page.get_by_test_id("agent-card").and_(page.locator("[data-slug='assistant']"))).to_be_visible()

        # Create: the slug follows the name; the starter prompt is one line.
        page.get_by_test_id("new-agent").click()
        page.wait_for_url(re.compile(r"/agents/new$"))
        page.get_by_label("Name", exact=True).fill(name)
        expect(page.get_by_label("Slug", exact=True)).to_have_value(slug)
        page.get_by_label("Instructions", exact=True).fill("Review contracts.\nFlag every risky clause.")
        page.get_by_label(re.compile(r"^Starter prompts")).fill(starter)
        check(page, f"agent-new-{width}")
        page.get_by_test_id("agent-save").click()
        page.wait_for_url(AGENT_PATH)
        agent_id = page.url.rsplit("/", 1)[1]
        expect(version_row(page, 1)).to_have_attribute("data-published", "true")

        # Try: a chat bound to the agent beside the form, with its starter prompt; the answer names v1.
        tried = page.get_by_test_id("agent-try")
        tried.get_by_test_id("try-start").click()
        tried.get_by_test_id("starter-prompt").filter(has_text=starter).click()
        expect(tried.get_by_test_id("user-message")).to_contain_text(starter)
        expect(answer_agent(tried)).to_have_text(re.compile(rf"{name} v1"))
        check(page, f"agent-try-{width}")

        # Try the form as it is: its unsaved change is saved as v2, a draft the try chat runs; nothing is published.
        page.get_by_label("Instructions", exact=True).fill("Review contracts.\nFlag every risky clause in bold.")
        expect(tried.get_by_test_id("try-version")).to_contain_text("not published")
        tried.get_by_role("textbox", name="Message").fill("Is the indemnity clause risky?")
        tried.get_by_role("button", name="Send", exact=True).click()
        expect(tried.get_by_test_id("answer-actions")).to_have_count(2)
        expect(answer_agent(tried)).to_have_text(re.compile(rf"{name} v2"))
        expect(version_row(page, 2)).to_have_attribute("data-published", "false")
        expect(version_row(page, 1)).to_have_attribute("data-published", "true")
        assert agent_api(page, agent_id)["published_version"] == 1

        # Save as draft: v3, still not published.
        page.get_by_label("Description", exact=True).fill("Reads contracts for risk.")
        page.get_by_test_id("agent-save-draft").click()
        expect(version_row(page, 3)).to_have_attribute("data-published", "false")
        assert agent_api(page, agent_id)["published_version"] == 1

        # The diff of v1 and v2: the changed line of the instructions, nothing else.
        page.get_by_test_id("diff-a").select_option("1")
        page.get_by_test_id("diff-b").select_option("2")
        page.get_by_test_id("show-diff").click()
        changed = page.get_by_test_id("diff-field").and_(page.locator("[data-field='instructions']"))
        expect(changed.locator(".del")).to_have_text(re.compile(r"Flag every risky clause\.\s*$"))
        expect(changed.locator(".add")).to_have_text(re.compile(r"Flag every risky clause in bold\.\s*$"))
        expect(page.get_by_test_id("diff-field")).to_have_count(1)
        check(page, f"agent-diff-{width}")

        # Publish v2.
        page.get_by_test_id("publish-v2").click()
        expect(version_row(page, 2)).to_have_attribute("data-published", "true")
        assert agent_api(page, agent_id)["published_version"] == 2

        # Chat: from the Explore page (searched), the landing page's picker has the agent and shows its starter.
        nav_to(page, phone, "Agents")
        page.get_by_test_id("agent-search").fill(width)
        card = page.get_by_test_id("agent-card").and_(page.locator(f"[data-slug='{slug}']"))
        expect(page.get_by_test_id("agent-card")).to_have_count(1)
        page.get_by_test_id("scope-mine").check()
        expect(card).to_be_visible()
        check(page, f"agents-explore-{width}")
        card.get_by_test_id("chat-with-agent").click()
        landing = page.get_by_test_id("landing")
        expect(landing.get_by_test_id("agent-picker")).to_have_value(slug)
        expect(landing.get_by_test_id("starter-prompt")).to_have_count(1)
        check(page, f"agent-landing-{width}")
        landing.get_by_test_id("starter-prompt").filter(has_text=starter).click()
        page.wait_for_url(UUID_PATH)
        chat_id = page.url.rsplit("/", 1)[1]
        expect(answer_agent(page)).to_have_text(re.compile(rf"{name} v2"))
        chat = page.request.get(f"/api/v1/chats/{chat_id}", headers={"Authorization": f"Bearer {page_token(page)}"})
        assert chat.json()["agent_id"] == agent_id

        # Roll back to v1 in the editor: the chat's next answer comes from v1.
        page.goto(f"/agents/{agent_id}")
        page.get_by_test_id("publish-v1").click()
        expect(version_row(page, 1)).to_have_attribute("data-published", "true")
        assert agent_api(page, agent_id)["published_version"] == 1
        page.goto(f"/chats/{chat_id}")
        page.get_by_role("textbox", name="Message").fill("And the termination clause?")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.get_by_test_id("answer-actions")).to_have_count(2)
        expect(answer_agent(page)).to_have_text(re.compile(rf"{name} v1"))
        check(page, f"agent-chat-{width}")
