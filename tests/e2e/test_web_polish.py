"""The polish people take for granted, in headless Chromium against a `pa dev` stack: Copy on answers and code
blocks, highlighted code, each answer's model, time and cost, a composer on the landing page that saves no empty
chat, keyboard shortcuts with their help, an in-app theme, no page that scrolls past the screen, and a console
without errors — CSP refusals included — through a session whose reply carries `<img src=x onerror=alert(1)>`.
Screenshots go to docs/screenshots/."""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from tests.e2e.web_browser import DESKTOP, open_page
from tests.e2e.web_chat_stack import ROOT, DevStack, describe_violations, serious_violations
from tests.e2e.web_chat_steps import UUID_PATH, new_chat, page_token, send, sign_in

pytestmark = pytest.mark.timeout(240)

SCREENSHOTS = ROOT / "docs" / "screenshots"
CODE = "def greet(name):\n    return f'hello {name}'  # say hello"
ANSWER = f"Here is the function:\n\n```python\n{CODE}\n```\n\nCall it with a **name**."

# Every signed-in page and what shows once its data has loaded (the admin console's pages mark `data-ready`).
PAGES: dict[str, str] = {
    "/": '[data-testid="landing"]',
    "/knowledge": "h1",
    "/approvals": '[data-testid="no-approvals"], [data-testid="approval-card"]',
    "/usage": '[data-testid="usage-by-model"]',
    "/settings": "#default-model option",
    "/settings/tools": "h1",
    "/admin": '[data-ready="true"]',
    "/admin/models": '[data-ready="true"]',
    "/admin/members": '[data-ready="true"]',
    "/admin/audit": '[data-ready="true"]',
}

# How far the document scrolls past the screen (the app scrolls inside its own regions, never the page).
DOCUMENT_OVERFLOW_JS = """() => ({
  doc: document.documentElement.scrollHeight - innerHeight,
  body: document.body.scrollHeight - innerHeight,
})"""


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": "150"}  # ~7 s per reply: long enough to stop one with Esc


@contextmanager
def quiet_console(browser: Any, web: DevStack, **context_args: Any) -> Iterator[Any]:
    """A tab (see `open_page`: it fails on uncaught errors and CSP refusals) that also fails on any console error."""
    errors: list[str] = []
    with open_page(browser, web.url, context_args.pop("viewport", DESKTOP), **context_args) as tab:
        tab.on("console", lambda m: errors.append(f"{m.type}: {m.text}") if m.type == "error" else None)
        yield tab
    assert not errors, f"console errors: {errors}"


def seed_answer(web: DevStack, chat_id: str, question: str, answer: str) -> None:
    """A stored turn (the user's question, then the answer as Markdown), as a finished run leaves it."""
    rows = [
        ("request", json.dumps({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": question}]})),
        ("response", json.dumps({"kind": "response", "parts": [{"part_kind": "text", "content": answer}]})),
    ]
    with psycopg.connect(web.admin_url(), autocommit=True) as conn, conn.cursor() as cur:
        for kind, message in rows:
            cur.execute(
                "INSERT INTO messages (org_id, chat_id, kind, message, parent_id) SELECT org_id, id, %s, %s,"
                " (SELECT max(m.id) FROM messages m WHERE m.chat_id = chats.id) FROM chats WHERE id = %s",
                (kind, message, chat_id),
            )


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# The colour at the middle of a canvas, and whether something is drawn there yet.
PIXEL_JS = "el => Array.from(el.getContext('2d').getImageData(el.width / 2, el.height / 2, 1, 1).data)"
DRAWN_JS = "el => el.getContext('2d').getImageData(el.width / 2, el.height / 2, 1, 1).data[3] > 0"


def chat_count(web: DevStack, token: str) -> int:
    with web.api(token) as api:
        listed = api.get("/api/v1/chats", params={"limit": 100})
        assert listed.status_code == 200, listed.text
        return len(listed.json()["items"])


def answered(page: Any) -> Any:
    """The latest answer once its run has finished (the facts of the run show under it then)."""
    from playwright.sync_api import expect

    details = page.get_by_test_id("answer-details").last
    expect(details).to_be_visible(timeout=60_000)
    return details


def clipboard(page: Any) -> str:
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_landing_composer_starts_a_chat_and_saves_none_before(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with quiet_console(browser, web) as page:
        sign_in(page)
        token = page_token(page)
        before = chat_count(web, token)
        landing = page.get_by_test_id("landing")
        box = landing.get_by_role("textbox", name="Message")
        expect(box).to_be_focused()

        # "New chat" (button or shortcut) opens the composer again: nothing is saved.
        page.get_by_role("button", name="New chat", exact=True).click()
        expect(box).to_be_focused()
        page.keyboard.press("Control+Shift+O")
        expect(box).to_be_focused()
        assert chat_count(web, token) == before
        assert not page.get_by_text("on the left").count()

        box.fill("Hello from the landing page")
        page.get_by_role("button", name="Send", exact=True).click()
        page.wait_for_url(UUID_PATH)
        expect(page.get_by_test_id("user-message")).to_contain_text("Hello from the landing page")
        answered(page)
        assert chat_count(web, token) == before + 1
        page.reload()
        expect(page.get_by_test_id("user-message")).to_have_count(1)
        answered(page)


def test_copy_buttons_highlighted_code_and_each_answers_model_time_and_cost(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with quiet_console(browser, web, color_scheme="light") as page:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        sign_in(page)
        chat_id = new_chat(page)
        seed_answer(web, chat_id, "Write me a greeting function", ANSWER)
        page.reload()
        answer = page.get_by_test_id("assistant-message").filter(has_text="Here is the function")
        code = answer.locator("pre code")

        # Highlighted by highlight.js (loaded on first use): keywords, strings and comments are their own spans.
        expect(code.locator(".hljs-keyword").first).to_have_text("def")
        expect(code.locator(".hljs-string").first).to_contain_text("hello")
        expect(code.locator(".hljs-comment")).to_have_text("# say hello")
        keyword = code.locator(".hljs-keyword").first.evaluate("el => getComputedStyle(el).color")
        assert keyword != code.evaluate("el => getComputedStyle(el).color"), "a keyword has its own colour"

        answer.get_by_role("button", name="Copy code").click()
        expect(answer.get_by_role("button", name="Copy code")).to_have_text("Copied")
        assert clipboard(page) == CODE
        page.get_by_test_id("answer-actions").first.get_by_role("button", name="Copy answer").click()
        assert clipboard(page) == ANSWER

        # The chat list's search shows the hit as words (no Markdown marks), the word searched for marked.
        page.get_by_role("searchbox", name="Search chats").fill("names")
        snippet = page.get_by_test_id("chat-snippet")
        expect(snippet).to_have_count(1)
        expect(snippet.locator("mark").first).to_have_text("name")
        expect(snippet).to_contain_text("Here is the function: def greet(name)")
        assert "`" not in snippet.inner_text()
        page.get_by_role("searchbox", name="Search chats").fill("")

        # A real run's answer says which model answered, how long it took and what it cost (from the run).
        send(page, "Hello, which model are you?")
        details = answered(page)
        expect(details).to_have_text(re.compile(r"^(Assistant v\d+ · )?(offline:)?demo · \d+(\.\d)? s · \$0\.00$"))

        found = serious_violations(page)
        assert not found, describe_violations(found)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        answer.evaluate("el => el.scrollIntoView({ block: 'start' })")
        page.screenshot(path=str(SCREENSHOTS / "chat.png"))

        # The same chat in the dark theme, chosen in the app.
        page.get_by_test_id("theme-toggle").get_by_text("Dark", exact=True).click()
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        expect(code.locator(".hljs-keyword").first).to_be_visible()
        answer.evaluate("el => el.scrollIntoView({ block: 'start' })")
        found = serious_violations(page)
        assert not found, describe_violations(found)
        page.screenshot(path=str(SCREENSHOTS / "chat-dark.png"))


def test_the_theme_toggle_overrides_the_system_and_is_remembered(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with quiet_console(browser, web, color_scheme="light") as page:
        sign_in(page)
        toggle = page.get_by_test_id("theme-toggle")
        background = "() => getComputedStyle(document.body.parentElement).backgroundColor"
        light = page.evaluate(background)
        expect(toggle.get_by_role("radio", name="System")).to_be_checked()

        toggle.get_by_text("Dark", exact=True).click()
        expect(toggle.get_by_role("radio", name="Dark")).to_be_checked()
        dark = page.evaluate(background)
        assert dark != light, (dark, light)
        page.reload()
        expect(page.get_by_test_id("theme-toggle").get_by_role("radio", name="Dark")).to_be_checked()
        assert page.evaluate(background) == dark

        # Light on a dark system, and back to the system's choice.
        page.emulate_media(color_scheme="dark")
        toggle.get_by_text("Light", exact=True).click()
        assert page.evaluate(background) == light
        toggle.get_by_text("System", exact=True).click()
        assert page.evaluate(background) == dark
        found = serious_violations(page)
        assert not found, describe_violations(found)


def test_keyboard_shortcuts_and_their_help(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with quiet_console(browser, web) as page:
        sign_in(page)
        new_chat(page)
        send(page, "Hello there, a question")
        answered(page)
        box = page.get_by_role("textbox", name="Message")

        # ? opens the list of shortcuts (not while typing); Esc closes it.
        page.get_by_test_id("transcript").focus()
        page.keyboard.press("?")
        help_dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
        expect(help_dialog).to_be_visible()
        expect(help_dialog).to_contain_text("Start a new chat")
        found = serious_violations(page)
        assert not found, describe_violations(found)
        page.keyboard.press("Escape")
        expect(help_dialog).to_be_hidden()

        # Shift+Esc focuses the message box; ArrowUp in the empty box edits the last message.
        page.get_by_test_id("transcript").focus()
        page.keyboard.press("Shift+Escape")
        expect(box).to_be_focused()
        box.press("?")  # typing, not a shortcut
        expect(help_dialog).to_be_hidden()
        box.fill("")
        box.press("ArrowUp")
        edit = page.get_by_test_id("edit-input")
        expect(edit).to_be_focused()
        expect(edit).to_have_value("Hello there, a question")
        edit.press("Escape")
        expect(edit).to_be_hidden()

        # Esc stops the answer being written.
        send(page, "Say something long")
        expect(page.get_by_test_id("assistant-message").last).to_have_attribute("data-streaming", "true")
        page.keyboard.press("Escape")
        expect(page.get_by_test_id("run-notice")).to_contain_text("stopped")
        expect(page.get_by_role("button", name="Stop", exact=True)).to_be_hidden()

        # Ctrl+Shift+O: a new chat (the landing composer).
        page.keyboard.press("Control+Shift+O")
        page.wait_for_url(re.compile(r"/$"))
        expect(page.get_by_test_id("landing").get_by_role("textbox", name="Message")).to_be_focused()


def test_no_page_scrolls_past_the_screen(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with quiet_console(browser, web) as page:
        sign_in(page)
        chat_id = new_chat(page)
        pages = {**PAGES, f"/chats/{chat_id}": '[data-testid="transcript"]'}
        for path, ready in pages.items():
            page.goto(path)
            expect(page.locator(ready).first).to_be_attached()
            overflow = page.evaluate(DOCUMENT_OVERFLOW_JS)
            assert overflow == {"doc": 0, "body": 0}, (path, overflow)


def test_a_reply_with_an_inline_handler_leaves_the_console_clean(browser: Any, web: DevStack) -> None:
    """The sanitiser never lets the browser see `onerror=` (Chromium reports a CSP refusal as soon as it parses one,
    even in an inert document), and the handler never runs."""
    from playwright.sync_api import expect

    with quiet_console(browser, web) as page:
        page.add_init_script("window.__alerted = 0; window.alert = () => { window.__alerted += 1; };")
        sign_in(page)
        box = page.get_by_role("textbox", name="Message")
        box.fill("Show this: <img src=x onerror=alert(1)> and <b onclick=alert(2)>bold</b>")
        page.get_by_role("button", name="Send", exact=True).click()
        page.wait_for_url(UUID_PATH)
        answered(page)
        bodies = page.get_by_test_id("message-body")
        expect(bodies.filter(has_text="Show this").first).to_be_visible()
        assert page.get_by_test_id("transcript").locator("img, [onerror], [onclick]").count() == 0
        page.reload()
        answered(page)
        page.get_by_role("searchbox", name="Search chats").fill("onerror")
        expect(page.get_by_test_id("chat-item")).to_have_count(1)
        assert page.evaluate("window.__alerted") == 0


def test_words_for_people_with_the_detail_behind_a_disclosure(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with quiet_console(browser, web) as page:
        sign_in(page)
        composer = page.get_by_test_id("composer")
        expect(composer).not_to_contain_text("Durable")
        expect(composer).not_to_contain_text("Inline")
        page.get_by_test_id("run-options").locator("summary").click()
        how = page.get_by_label("How to run", exact=True)
        expect(how).to_be_visible()
        assert how.locator("option").all_inner_texts() == ["Choose for me", "Right away", "In the background"]
        how.select_option("durable")
        expect(page.get_by_test_id("run-options")).to_contain_text("can wait for approvals")
        how.select_option("inline")
        page.get_by_test_id("run-options").locator("summary").click()

        page.get_by_role("textbox", name="Message").fill('/tool current_time {"timezone": "UTC"}')
        page.get_by_role("button", name="Send", exact=True).click()
        page.wait_for_url(UUID_PATH)
        answered(page)
        expect(page.get_by_test_id("run-mode")).to_have_text("Right away")
        card = page.get_by_test_id("tool-call").filter(has_text="current_time").first
        expect(card.get_by_test_id("tool-source")).to_have_text("built in")
        expect(card.locator("summary")).not_to_contain_text("tier")
        card.locator("summary").click()
        asked = card.get_by_role("group", name="Tool arguments")
        expect(asked.locator("dt")).to_have_text(["Timezone"])
        expect(asked.locator("dd")).to_have_text(["UTC"])
        expect(asked.locator("pre")).to_have_count(0)  # the raw JSON waits behind "Show raw data"
        asked.get_by_role("button", name="Show raw data").click()
        expect(asked.locator("pre")).to_contain_text('"timezone": "UTC"')
        expect(card.get_by_test_id("tool-trust")).to_have_text("Built into the app · trust tier 2")
        found = serious_violations(page)
        assert not found, describe_violations(found)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_composer_popovers_stay_inside_the_screen(browser: Any, web: DevStack, width: int) -> None:
    from playwright.sync_api import expect

    viewport = {"width": width, "height": 700}
    with quiet_console(browser, web, viewport=viewport) as page:
        sign_in(page)
        for name, panel in (("tool-picker", "fieldset"), ("run-options", ".panel")):
            page.get_by_test_id(name).locator("summary").click()
            box = page.get_by_test_id(name).locator(panel)
            expect(box).to_be_visible()
            rect = box.bounding_box()
            assert rect is not None
            assert rect["x"] >= 0 and rect["y"] >= 0, (name, rect)
            assert rect["x"] + rect["width"] <= width and rect["y"] + rect["height"] <= viewport["height"], (name, rect)
            page.get_by_test_id(name).locator("summary").click()
            expect(box).to_be_hidden()


def test_an_image_in_the_composer_shows_a_thumbnail_that_opens_it(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with quiet_console(browser, web) as page:
        sign_in(page)
        new_chat(page)
        page.get_by_test_id("attach-input").set_input_files(
            [
                {"name": "red.png", "mimeType": "image/png", "buffer": png(40, 20, (220, 30, 30))},
                {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"just text"},
            ]
        )
        chips = page.get_by_test_id("composer").get_by_test_id("attachment-chip")
        expect(chips).to_have_count(2)
        image = chips.filter(has_text="red.png")
        thumb = image.get_by_test_id("attachment-thumb")
        expect(thumb).to_be_visible()
        page.wait_for_function(DRAWN_JS, arg=thumb.element_handle())
        assert thumb.evaluate(PIXEL_JS) == [220, 30, 30, 255]
        assert chips.filter(has_text="notes.txt").get_by_test_id("attachment-thumb").count() == 0

        image.get_by_role("button", name="Open red.png").click()
        dialog = page.get_by_role("dialog", name="red.png")
        expect(dialog).to_be_visible()
        shown = dialog.get_by_test_id("attachment-preview")
        page.wait_for_function(DRAWN_JS, arg=shown.element_handle())
        assert shown.evaluate("el => [el.width, el.height]") == [40, 20]  # whole, not cropped
        assert shown.evaluate(PIXEL_JS) == [220, 30, 30, 255]
        found = serious_violations(page)
        assert not found, describe_violations(found)
        dialog.get_by_role("button", name="Close").click()
        expect(dialog).to_be_hidden()
