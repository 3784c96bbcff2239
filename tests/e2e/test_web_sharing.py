"""Sharing and temporary chats in the web chat (issue 38), headless Chromium against a `pa dev` stack: alice shares
a chat from its header; bob, a member of her org, opens the link, reads the chat as it was and continues it into
his own chats; a browser with no sign-in (at phone width) and, once alice revokes it, bob too are told there is no
such link. A temporary chat started from the landing page, at desktop and at phone width, is answered but never
listed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.e2e.web_browser import DESKTOP, PHONE, assert_fits, open_page
from tests.e2e.web_chat_stack import DevStack, screenshot
from tests.e2e.web_chat_steps import UUID_PATH, new_chat, reply, send, sign_in

pytestmark = pytest.mark.timeout(300)


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


def _share_link(page: Any) -> str:
    from playwright.sync_api import expect

    page.get_by_test_id("share-chat").click()
    expect(page.get_by_test_id("share-org")).to_be_checked()  # org-only unless the sharer picks otherwise
    page.get_by_test_id("share-create").click()
    url = page.get_by_test_id("share-url")
    expect(url).to_have_value(re.compile(r".*/s/[A-Za-z0-9_-]{40,}$"))
    return urlparse(url.input_value()).path


def test_share_view_continue_and_revoke(page: Any, browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    send(page, "hello sharing world")
    expect(reply(page)).to_have_count(1)
    link = _share_link(page)
    screenshot(page, "share-dialog")
    page.get_by_role("button", name="Done").click()

    send(page, "a later message")  # after the link was made: not in it
    expect(reply(page)).to_have_count(2)

    with open_page(browser, web.url, DESKTOP) as bob:
        _sign_in_as(bob, "bob")
        bob.goto(link)
        expect(bob.get_by_test_id("shared-title")).to_be_visible()
        expect(bob.get_by_test_id("shared-user")).to_have_count(1)
        expect(bob.get_by_test_id("shared-user")).to_contain_text("hello sharing world")
        expect(bob.get_by_test_id("shared-transcript")).not_to_contain_text("a later message")
        screenshot(bob, "shared-chat")
        bob.get_by_test_id("share-continue").click()
        bob.wait_for_url(UUID_PATH)
        expect(bob.get_by_test_id("user-message")).to_contain_text("hello sharing world")

        with open_page(browser, web.url, PHONE, is_mobile=True, has_touch=True) as anonymous:
            anonymous.goto(link)
            expect(anonymous.get_by_test_id("share-missing")).to_be_visible()
            expect(anonymous.get_by_test_id("share-missing").get_by_role("link", name="sign in")).to_be_visible()
            expect(anonymous.get_by_test_id("shared-transcript")).to_have_count(0)
            assert_fits(anonymous, "share-missing-phone")

        # A second link up to the first answer (the chat went on since), then revoked from the dialog.
        page.get_by_test_id("share-chat").click()
        expect(page.get_by_test_id("share-upto").locator("option")).to_have_count(3)  # the whole chat, two answers
        page.get_by_test_id("share-upto").select_option(index=1)
        page.get_by_test_id("share-create").click()
        second = urlparse(page.get_by_test_id("share-url").input_value()).path
        bob.goto(second)
        expect(bob.get_by_test_id("shared-user")).to_have_count(1)
        expect(bob.get_by_test_id("shared-transcript")).not_to_contain_text("a later message")
        page.get_by_test_id("share-revoke").click()
        bob.goto(second)
        expect(bob.get_by_test_id("share-missing")).to_be_visible()
        bob.goto(link)  # the first link still works
        expect(bob.get_by_test_id("shared-title")).to_be_visible()


def test_shared_chat_at_phone_width(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    token = web.token(user="carol", role="user")
    with web.api(token) as api:
        chat = api.post("/api/v1/chats", json={"title": "Phone share"}).json()
        made = api.post(f"/api/v1/chats/{chat['id']}/shares", json={})
        assert made.status_code == 201, made.text
    with open_page(browser, web.url, PHONE, is_mobile=True, has_touch=True) as phone:
        _sign_in_as(phone, "dave")
        phone.goto(urlparse(made.json()["url"]).path)
        expect(phone.get_by_test_id("shared-title")).to_have_text("Phone share")
        expect(phone.get_by_test_id("share-continue")).to_be_in_viewport()
        assert_fits(phone, "shared-chat-phone")


@pytest.fixture(params=["desktop", "phone"])
def landing(request: pytest.FixtureRequest, browser: Any, web: DevStack) -> Iterator[Any]:
    """Signed in, on the landing page, at desktop or phone width."""
    phone = request.param == "phone"
    touch = {"is_mobile": True, "has_touch": True} if phone else {}
    with open_page(browser, web.url, PHONE if phone else DESKTOP, **touch) as page:
        sign_in(page)
        yield page


def test_a_temporary_chat_is_answered_and_not_listed(landing: Any) -> None:
    from playwright.sync_api import expect

    page = landing
    if page.viewport_size["width"] < DESKTOP["width"]:
        page.get_by_role("button", name="Chats").first.click()  # at phone width the chat list is a drawer
    page.get_by_role("button", name="New chat", exact=True).click()
    page.get_by_test_id("temporary-chat").check()
    page.get_by_test_id("landing").get_by_role("textbox", name="Message").fill("an off the record question")
    page.get_by_role("button", name="Send", exact=True).click()
    page.wait_for_url(UUID_PATH)
    expect(reply(page)).to_have_count(1)
    chat_id = page.url.rsplit("/", 1)[-1]
    page.reload()
    expect(reply(page)).to_have_count(1)
    listed = page.request.get("/api/v1/chats", headers={"Authorization": f"Bearer {_token(page)}"}).json()
    assert chat_id not in [c["id"] for c in listed["items"]]
    expect(page.locator(f'a[href="/chats/{chat_id}"]')).to_have_count(0)
    assert_fits(page, "temporary-chat")


def _token(page: Any) -> str:
    return str(page.evaluate("sessionStorage.getItem('pa.devToken')"))


def test_an_admin_allows_public_links_and_anyone_opens_one_on_a_phone(page: Any, browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)  # alice is an admin of acme
    page.goto("/settings")
    retention = page.get_by_test_id("retention")
    expect(retention.get_by_test_id("allow-public")).not_to_be_checked()
    retention.get_by_test_id("allow-public").check()
    retention.get_by_test_id("retention-save").click()
    expect(retention.get_by_role("status")).to_have_text("Saved.")

    page.goto("/")
    new_chat(page)
    send(page, "a public hello")
    expect(reply(page)).to_have_count(1)
    page.get_by_test_id("share-chat").click()
    page.get_by_test_id("share-public").check()
    page.get_by_test_id("share-create").click()
    link = urlparse(page.get_by_test_id("share-url").input_value()).path
    page.get_by_role("button", name="Done").click()

    with open_page(browser, web.url, PHONE, is_mobile=True, has_touch=True) as anonymous:
        anonymous.goto(link)
        expect(anonymous.get_by_test_id("shared-user")).to_contain_text("a public hello")
        expect(anonymous.get_by_role("link", name="Sign in to continue")).to_be_visible()
        assert_fits(anonymous, "public-share-phone")
        screenshot(anonymous, "public-share-phone")

    page.goto("/settings")  # the link is listed under "Your data", and revoked from there
    mine = page.get_by_test_id("my-shares")
    expect(mine).to_contain_text("public")
    mine.get_by_role("button", name="Revoke").first.click()
    expect(mine.get_by_text("revoked").first).to_be_visible()


def test_download_my_data_polls_the_export_and_saves_the_zip(page: Any, web: DevStack) -> None:
    """ "Download my data" starts the export (202), shows that it is being prepared, polls it and follows its
    presigned link: the browser saves the ZIP, which holds the chat just had."""
    import io
    import json
    import zipfile

    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    send(page, "hello export world")
    expect(reply(page)).to_have_count(1)
    chat_id = urlparse(page.url).path.rsplit("/", 1)[-1]

    page.goto("/settings")
    mine = page.get_by_test_id("my-data")
    with page.expect_download(timeout=60_000) as saved:
        mine.get_by_test_id("export-data").click()
        expect(mine.get_by_test_id("export-status")).to_be_visible()
    download = saved.value
    assert download.suggested_filename.startswith("personal-agent-export-") and download.suggested_filename.endswith(
        ".zip"
    )
    path = download.path()
    assert path is not None
    archive = zipfile.ZipFile(io.BytesIO(path.read_bytes()))
    assert json.loads(archive.read("manifest.json"))["scope"] == "user"
    assert "hello export world" in archive.read(f"chats/{chat_id}.md").decode()
    expect(mine.get_by_test_id("export-status")).to_contain_text("ready")


def test_an_admin_exports_the_organisation_from_settings(page: Any, web: DevStack) -> None:
    """Settings, "Sharing and retention": an org admin's export of the organisation is prepared, then saved."""
    import io
    import json
    import zipfile

    from playwright.sync_api import expect

    sign_in(page)  # alice is an admin of acme
    page.goto("/settings")
    retention = page.get_by_test_id("retention")
    with page.expect_download(timeout=60_000) as saved:
        retention.get_by_test_id("export-org").click()
    download = saved.value
    assert download.suggested_filename.startswith("personal-agent-org-export-"), download.suggested_filename
    path = download.path()
    assert path is not None
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(path.read_bytes())).read("manifest.json"))
    assert manifest["scope"] == "org" and manifest["complete"] is True
    expect(retention.get_by_test_id("export-org-status")).to_contain_text("ready")
