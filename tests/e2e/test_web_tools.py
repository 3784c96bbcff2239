"""Tools and MCP servers in a real browser (Debian's headless Chromium) against a `pa dev` stack of their own.

An org admin adds the demo MCP server (started by the test on loopback) as an untrusted, tier-0 server with a
sealed auth header, tests the connection and sees its tools, sets a tool's approval policy and the server's tier;
then picks one of its tools for a chat (remembered after a reload), calls it with the offline model's
`/tool NAME {json}`, and the tool card names the server and tier and marks the result untrusted. A member who is
not an admin is not offered the page. The page passes axe.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from personal_agent.local.demo_mcp import DemoLog
from tests.e2e.web_browser import PHONE, assert_fits, open_page
from tests.e2e.web_chat_stack import (
    DevStack,
    describe_violations,
    screenshot,
    serious_violations,
)
from tests.live_server import LiveServer
from tests.mcp_demo import serve_demo

pytestmark = pytest.mark.timeout(240)
UUID_PATH = re.compile(r"/chats/[0-9a-f-]{36}$")
SECRET = "Bearer e2e-mcp-secret-8c21f"


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    """The "outside" MCP server the admin adds is on loopback: the operator allow-lists it (docs/mcp.md)."""
    return {"PA_DEMO_DELAY_MS": "0", "PA_MCP_ALLOW_HOSTS": "127.0.0.1"}


@pytest.fixture(scope="module")
def outside() -> Iterator[tuple[LiveServer, DemoLog]]:
    """The demo MCP server on loopback: the "outside" server the admin adds."""
    with serve_demo() as served:
        yield served


def sign_in(page: Any, role: str = "admin", user: str = "alice") -> None:
    from playwright.sync_api import expect

    page.goto("/login")
    page.get_by_label("User", exact=True).fill(user)
    page.get_by_label("Role").select_option(role)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("who")).to_contain_text("acme")


def _server(web: DevStack, name: str) -> dict[str, Any]:
    with web.api(web.token()) as api:
        listed = api.get("/api/v1/admin/mcp-servers").json()["items"]
    return dict(next(s for s in listed if s["name"] == name))


def test_an_admin_adds_an_mcp_server_and_a_chat_uses_its_tool(
    page: Any, web: DevStack, outside: tuple[LiveServer, DemoLog]
) -> None:
    from playwright.sync_api import expect

    server, log = outside
    sign_in(page)
    page.get_by_role("link", name="Settings").click()
    page.get_by_test_id("tools-settings-link").click()
    expect(page.get_by_role("heading", name="Tools & MCP servers")).to_be_visible()

    form = page.get_by_role("form", name="Add a server")
    form.get_by_label("Name", exact=True).fill("outside")
    form.get_by_label("URL (streamable HTTP)").fill(f"{server.url}/mcp")
    form.get_by_label("Trust tier", exact=True).select_option(label="0 · untrusted")
    form.get_by_label("Header name").fill("Authorization")
    form.get_by_label("Value", exact=True).fill(SECRET)
    form.get_by_role("button", name="Add server").click()

    card = page.get_by_test_id("mcp-server").filter(has=page.get_by_role("heading", name="outside"))
    expect(card.get_by_test_id("mcp-header-names")).to_have_text("Authorization")
    expect(form.get_by_label("Value", exact=True)).to_have_value("")  # write-only: gone from the page once saved
    assert "e2e-mcp-secret" not in page.content()

    card.get_by_role("button", name="Test connection").click()
    expect(card.get_by_test_id("mcp-status")).to_have_text("reachable · 2 tools")
    expect(card.get_by_test_id("mcp-tool-weather")).to_contain_text("outside_weather")
    expect(card.get_by_test_id("mcp-tool-post_note")).to_contain_text("outside_post_note")
    assert any(h.get("authorization") == SECRET for h in log.headers)  # the sealed header reached the server

    card.get_by_label("outside_post_note acts on the world").check()
    card.get_by_label("Approval policy of outside_post_note").select_option(label="Always ask")
    card.get_by_role("button", name="Save policies").click()
    expect(card.get_by_role("status")).to_have_text("Policies saved.")
    stored = _server(web, "outside")
    assert stored["tool_policies"]["post_note"] == {"acts": True, "approval": "always"}
    assert stored["trust_tier"] == 0 and "e2e-mcp-secret" not in json.dumps(stored)

    violations = serious_violations(page)
    assert not violations, describe_violations(violations)
    screenshot(page, "tools-settings")

    # A chat picks the server's read-only tool and calls it.
    page.get_by_role("link", name="Chats").first.click()
    page.get_by_role("button", name="New chat", exact=True).click()  # the landing composer: saved on first send
    picker = page.get_by_test_id("tool-picker")
    picker.locator("summary").click()
    option = picker.get_by_test_id("tool-option-outside_weather")
    expect(option).not_to_be_checked()
    expect(picker.get_by_role("group", name="Tools for this chat")).to_contain_text("from outside")
    option.check()
    picker.locator("summary").click()

    page.get_by_role("textbox", name="Message").fill('/tool outside_weather {"city": "Paris"}')
    page.get_by_role("button", name="Send", exact=True).click()
    page.wait_for_url(UUID_PATH)
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Paris: light rain")
    tool_card = page.get_by_test_id("tool-call").filter(has_text="outside_weather")
    expect(tool_card.get_by_test_id("tool-source")).to_have_text("from outside")
    expect(tool_card.get_by_test_id("tool-untrusted")).to_have_text("untrusted result")
    screenshot(page, "tool-card-untrusted")

    page.reload()  # the stored transcript's card names its source too, and the chat keeps its tool choice
    tool_card = page.get_by_test_id("tool-call").filter(has_text="outside_weather")
    expect(tool_card.get_by_test_id("tool-source")).to_have_text("from outside")
    expect(tool_card.get_by_test_id("tool-untrusted")).to_be_visible()
    expect(page.get_by_test_id("tool-picker").locator("summary")).to_contain_text("Tools (")
    page.get_by_test_id("tool-picker").locator("summary").click()
    expect(page.get_by_test_id("tool-option-outside_weather")).to_be_checked()

    # Raising the server's tier and deleting it, from the same page.
    page.goto("/settings/tools")
    card = page.get_by_test_id("mcp-server").filter(has=page.get_by_role("heading", name="outside"))
    card.get_by_label("Trust tier").select_option(label="1 · regulated")
    card.get_by_role("button", name="Save", exact=True).click()
    expect(card.get_by_role("status")).to_have_text("Saved.")
    assert _server(web, "outside")["trust_tier"] == 1
    card.get_by_role("button", name="Delete server outside").click()
    expect(card).to_have_count(0)
    with web.api(web.token()) as api:
        names = [s["name"] for s in api.get("/api/v1/admin/mcp-servers").json()["items"]]
    assert "outside" not in names


def test_a_member_who_is_not_an_admin_is_not_offered_the_page(page: Any) -> None:
    from playwright.sync_api import expect

    sign_in(page, role="user", user="bob")
    page.get_by_role("link", name="Settings").click()
    expect(page.get_by_role("heading", name="Settings")).to_be_visible()
    expect(page.get_by_test_id("tools-settings-link")).to_have_count(0)
    page.goto("/settings/tools")
    expect(page.get_by_text("Only organisation admins manage")).to_be_visible()
    expect(page.get_by_test_id("mcp-server")).to_have_count(0)


def test_the_tool_picker_fits_a_phone(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with web.api(web.token()) as api:
        chat = api.post("/api/v1/chats", json={"title": "phone tools"}).json()
    with open_page(browser, web.url, PHONE, is_mobile=True, has_touch=True) as phone:
        sign_in(phone)
        phone.goto(f"/chats/{chat['id']}")
        picker = phone.get_by_test_id("tool-picker")
        picker.locator("summary").click()
        option = picker.get_by_test_id("tool-option-current_time")
        expect(option).to_be_in_viewport(ratio=1)
        expect(option).to_be_checked()  # a default tool
        assert_fits(phone, "tool picker open")
        expect(phone.get_by_role("button", name="Send", exact=True)).to_be_in_viewport(ratio=1)
        screenshot(phone, "mobile-tool-picker")
