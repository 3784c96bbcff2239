"""Browser plumbing shared by the newer web tests: headless Chromium from Debian and a page that fails the
test on uncaught errors or CSP refusals, at any viewport."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.web_chat_stack import CHROMIUM, CHROMIUM_ARGS

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}

# Every element that sticks out past the right edge of the screen, unless a scrolling or clipping box holds it.
OVERFLOW_JS = """() => {
  const width = window.innerWidth;
  const clips = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      const clipping = o === 'auto' || o === 'scroll' || o === 'hidden' || o === 'clip';
      if (clipping) return p !== document.body && p.id !== 'main';
    }
    return false;
  };
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const name = `${el.tagName.toLowerCase()}.${el.className}`;
    if (r.right > width + 1 && !clips(el)) out.push(`${name} right=${Math.round(r.right)}`);
  }
  const main = document.getElementById('main');
  return {
    width,
    scrollWidth: document.documentElement.scrollWidth,
    bodyScrollWidth: document.body.scrollWidth,
    mainScrollWidth: main ? main.scrollWidth : 0,
    mainClientWidth: main ? main.clientWidth : 0,
    offenders: out.slice(0, 10),
  };
}"""


def assert_fits(page: Any, name: str) -> None:
    """No sideways scrolling: neither the document nor the main area is wider than the screen."""
    found = page.evaluate(OVERFLOW_JS)
    assert found["scrollWidth"] <= found["width"], (name, found)
    assert found["bodyScrollWidth"] <= found["width"], (name, found)
    assert found["mainScrollWidth"] <= found["mainClientWidth"], (name, found)
    assert not found["offenders"], (name, found)


@contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium` (.ci/run does)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def open_page(browser: Any, base_url: str, viewport: dict[str, int], **context_args: Any) -> Iterator[Any]:
    """A fresh context and tab; on exit, fails if the page threw or the CSP refused anything."""
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)
    context = browser.new_context(base_url=base_url, viewport=viewport, **context_args)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    try:
        yield tab
    finally:
        context.close()
    assert not errors, f"uncaught errors or CSP violations in the page: {errors}"
