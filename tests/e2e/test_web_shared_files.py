"""A shared chat's sources and files in the web chat (issue 38), headless Chromium against a `pa dev` stack: alice
asks about her handbook with a picture attached and shares the chat; bob, a member of her org, opens the link at
desktop and phone width and sees the answer's numbered source with its label (its passage opens under it) and the
picture drawn from its bytes, fetched through the link."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from tests.e2e.web_browser import DESKTOP, PHONE, assert_fits, open_page
from tests.e2e.web_chat_stack import DevStack
from tests.knowledge import make_pdf
from tests.png import tiny_png

pytestmark = pytest.mark.timeout(300)

HANDBOOK = "Offsite handbook: the boat to the island leaves from pier 9 at seven sharp."


def _indexed(api: httpx.Client, name: str, data: bytes) -> None:
    """A knowledge document uploaded and polled (with a bound) until it is ready."""
    body = {"filename": name, "content_type": "application/pdf", "size": len(data)}
    made = api.post("/api/v1/knowledge/documents", json=body)
    assert made.status_code == 201, made.text
    form, document = made.json()["upload"], made.json()["document"]["id"]
    assert httpx.post(form["url"], data=form["fields"], files={"file": (name, data)}, timeout=30).status_code < 300
    deadline = time.monotonic() + 120
    while (status := api.get(f"/api/v1/knowledge/documents/{document}").json()["status"]) != "ready":
        assert status != "failed" and time.monotonic() < deadline, status
        time.sleep(0.2)


def _turn(api: httpx.Client, chat: str, message: str, **extra: Any) -> None:
    started = api.post(f"/api/v1/chats/{chat}/runs", json={"message": message, "model": "offline:demo", **extra})
    assert started.status_code == 202, started.text
    with api.stream("GET", started.json()["events_url"]) as stream:
        assert any('"RUN_FINISHED"' in line for line in stream.iter_lines())


def _shared_link(web: DevStack) -> str:
    """Alice's chat with a picture and a cited answer, shared with her org; the link's path."""
    image = tiny_png(6, 4)
    with web.api(web.token(user="alice", role="user")) as api:
        _indexed(api, "handbook.pdf", make_pdf([HANDBOOK]))
        chat = api.post("/api/v1/chats", json={"title": "Offsite"}).json()["id"]
        body = {"filename": "island.png", "content_type": "image/png", "size": len(image)}
        made = api.post(f"/api/v1/chats/{chat}/attachments", json=body).json()
        form = made["upload"]
        sent = httpx.post(form["url"], data=form["fields"], files={"file": ("island.png", image, "image/png")})
        assert sent.status_code < 300, sent.text
        _turn(api, chat, "a picture of the island", attachments=[made["id"]])
        _turn(api, chat, '/tool search_knowledge {"query": "when does the boat leave"}')
        shared = api.post(f"/api/v1/chats/{chat}/shares", json={})
        assert shared.status_code == 201, shared.text
    return urlparse(shared.json()["url"]).path


def test_a_shared_chat_shows_its_sources_and_its_picture(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    link = _shared_link(web)
    for name, viewport, extra in (("desktop", DESKTOP, {}), ("phone", PHONE, {"is_mobile": True, "has_touch": True})):
        with open_page(browser, web.url, viewport, **extra) as bob:
            bob.goto("/")
            bob.get_by_label("User", exact=True).fill("bob")
            bob.get_by_label("Role").select_option("user")
            bob.get_by_role("button", name="Sign in", exact=True).click()
            expect(bob.get_by_test_id("who")).to_contain_text("bob")
            bob.goto(link)
            sources = bob.get_by_test_id("shared-citations")
            expect(sources.get_by_test_id("shared-citation")).to_have_count(1)
            expect(sources).to_contain_text("[1] handbook.pdf, p. 1")
            expect(sources.get_by_text("pier 9")).to_be_hidden()
            sources.get_by_text("handbook.pdf, p. 1").click()  # the passage opens under its label
            expect(sources.get_by_text("pier 9")).to_be_visible()
            expect(bob.get_by_test_id("shared-transcript").locator("details.tool")).to_have_count(0)
            files = bob.get_by_test_id("shared-files")
            expect(files.get_by_test_id("attachment-chip")).to_contain_text("island.png")
            expect(files.get_by_test_id("attachment-thumb")).to_be_visible()  # drawn from the bytes via the link
            if name == "phone":
                assert_fits(bob, "shared-sources-phone")
