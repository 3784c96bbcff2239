"""The installable web app in headless Chromium against a `pa dev` stack: a manifest with icons, a service worker
that opens the app offline, and caches nothing from the API or its event streams."""

from __future__ import annotations

import io
from typing import Any

import httpx
import pytest

from tests.e2e.web_browser import open_page
from tests.e2e.web_chat_stack import DevStack, screenshot
from tests.e2e.web_chat_steps import new_chat, reply, send, sign_in

pytestmark = pytest.mark.timeout(240)

CACHED_URLS_JS = """async () => {
  const urls = [];
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    for (const request of await cache.keys()) urls.push(new URL(request.url).pathname);
  }
  return urls;
}"""


def test_the_manifest_names_the_app_and_its_icons(web: DevStack) -> None:
    from PIL import Image

    index = httpx.get(f"{web.url}/", timeout=10).text
    assert '<link rel="manifest" href="/manifest.webmanifest"' in index
    manifest = httpx.get(f"{web.url}/manifest.webmanifest", timeout=10)
    assert manifest.status_code == 200
    data = manifest.json()
    assert data["name"] == "Personal Agent" and data["display"] == "standalone" and data["start_url"] == "/"
    for icon in data["icons"]:
        got = httpx.get(f"{web.url}{icon['src']}", timeout=10)
        assert got.status_code == 200, icon
        if icon["type"] == "image/png":
            width, height = Image.open(io.BytesIO(got.content)).size
            assert icon["sizes"] == f"{width}x{height}"
    worker = httpx.get(f"{web.url}/sw.js", timeout=10)
    assert worker.status_code == 200 and "javascript" in worker.headers["content-type"]
    assert worker.headers["cache-control"] == "no-cache"  # a new worker is picked up at the next visit


OFFLINE_WHEN_TOLD_JS = """
if (sessionStorage.getItem('pa-test-offline') === '1') {
  Object.defineProperty(Navigator.prototype, 'onLine', { configurable: true, get: () => false });
}
"""


def test_the_app_opens_offline_and_never_caches_the_api_or_streams(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with open_page(browser, web.url, {"width": 1280, "height": 860}) as page:
        page.add_init_script(OFFLINE_WHEN_TOLD_JS)
        sign_in(page)
        assert page.evaluate("navigator.serviceWorker.ready.then(r => !!r.active)")
        # A chat with a streamed reply: the API and the SSE stream went through the page under the worker.
        chat_id = new_chat(page)
        send(page, "Cache check")
        expect(reply(page)).to_contain_text("real model")
        page.reload()
        assert page.evaluate("!!navigator.serviceWorker.controller"), "the worker controls the page after a reload"
        expect(reply(page)).to_contain_text("real model")

        cached = page.evaluate(CACHED_URLS_JS)
        assert "/" in cached and any(u.startswith("/assets/") for u in cached), cached
        assert not [u for u in cached if u.startswith(("/api", "/mcp", "/healthz", "/readyz"))], cached

        # Playwright's offline emulation cuts the network, but Debian's Chromium 150 leaves `navigator.onLine` true
        # under it (the old tree fails the same way): the page is told as a browser would tell it, the network is
        # really cut.
        page.evaluate("sessionStorage.setItem('pa-test-offline', '1')")
        page.context.set_offline(True)
        page.goto(f"/chats/{chat_id}")
        expect(page.get_by_test_id("offline")).to_contain_text("You are offline")
        expect(page.get_by_role("link", name="Skip to content")).to_be_attached()
        screenshot(page, "offline-shell")
        # The API is never answered from a cache: offline, it fails instead of showing old data.
        failed = page.evaluate("fetch('/api/v1/config').then(() => 'answered', () => 'failed')")
        assert failed == "failed"
        assert page.evaluate(CACHED_URLS_JS) and not [u for u in page.evaluate(CACHED_URLS_JS) if u.startswith("/api")]

        page.evaluate("sessionStorage.removeItem('pa-test-offline')")
        page.context.set_offline(False)
        page.goto(f"/chats/{chat_id}")
        expect(page.get_by_test_id("offline")).to_have_count(0)
        expect(reply(page)).to_contain_text("real model")
