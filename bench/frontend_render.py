"""Time to first render of the web chat on the local stack, in headless Chromium (Debian's).

Starts its own `pa dev` (free ports, temporary data) unless --url names a running one. For each page
it loads N times in a fresh browser context (cold cache) and prints the median of:
- first contentful paint (the browser's paint timing), and
- app rendered: navigation start -> the page's main content is in the DOM (login form, chat list).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.web_chat_stack import CHROMIUM, CHROMIUM_ARGS, dev_stack, ensure_frontend_built  # noqa: E402

RUNS = 7
FCP = "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null"


def measure(browser: Any, url: str, ready: str, token: str | None, runs: int) -> tuple[float, float]:
    fcps, renders = [], []
    for _ in range(runs):
        context = browser.new_context()
        if token:
            context.add_init_script(f"sessionStorage.setItem('pa.devToken', {token!r})")
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector(ready)
        renders.append(page.evaluate("performance.now()"))
        page.wait_for_function(f"({FCP}) !== null")
        fcps.append(page.evaluate(FCP))
        context.close()
    return statistics.median(fcps), statistics.median(renders)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", help="a running `pa dev` (default: start one)")
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    ensure_frontend_built()
    with ExitStack() as stack:
        if args.url:
            import httpx

            url = args.url.rstrip("/")
            token = httpx.post(f"{url}/api/v1/dev/login", json={"org": "acme", "user": "bench", "role": "user"}).json()[
                "access_token"
            ]
        else:
            data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pa-render-"))) / "data"
            running = stack.enter_context(dev_stack(data))
            url, token = running.url, running.token(user="bench", role="user")
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        pages = [
            ("login page (signed out)", f"{url}/login", "form button[type=submit]", None),
            ("chats page (signed in)", f"{url}/", "aside[aria-label='Chat list'] button", token),
            ("usage page (signed in)", f"{url}/usage", "[data-testid=usage-by-model]", token),
        ]
        print(f"web chat at {url}, {args.runs} cold loads each, medians:")
        for name, page_url, ready, tok in pages:
            fcp, rendered = measure(browser, page_url, ready, tok, args.runs)
            print(f"  {name:26s} first contentful paint {fcp:6.0f} ms   app rendered {rendered:6.0f} ms")
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
