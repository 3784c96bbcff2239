"""What a person does in the web chat, as steps the browser tests share: sign in on the dev login, open a new chat,
send a message, read the demo model's reply."""

from __future__ import annotations

import base64
import re
from typing import Any

UUID_PATH = re.compile(r"/chats/[0-9a-f-]{36}$")


def sign_in(page: Any) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    expect(page.get_by_role("heading", name="Dev login")).to_be_visible()
    expect(page.get_by_label("Organisation")).to_have_value("acme")
    expect(page.get_by_label("User", exact=True)).to_have_value("alice")
    expect(page.get_by_label("Role")).to_have_value("admin")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("who")).to_contain_text("acme")


def new_chat(page: Any) -> str:
    """ "New chat" opens the landing composer and saves nothing; the tests that need a chat before its first
    message (seeded turns, runs started over the API) get an empty one through the API, as another client would."""
    from playwright.sync_api import expect

    page.get_by_role("button", name="New chat", exact=True).click()
    page.wait_for_url(re.compile(r"/$"))
    expect(page.get_by_test_id("landing").get_by_role("textbox", name="Message")).to_be_focused()
    response = page.request.post("/api/v1/chats", data={}, headers={"Authorization": f"Bearer {page_token(page)}"})
    assert response.status == 201, response.text()
    chat_id = str(response.json()["id"])
    page.goto(f"/chats/{chat_id}")
    page.wait_for_url(UUID_PATH)
    expect(page.get_by_role("textbox", name="Message")).to_be_enabled()
    return chat_id


def send(page: Any, text: str, mode: str | None = None) -> None:
    if mode:  # behind the composer's Options button
        page.get_by_test_id("run-options").locator("summary").click()
        page.get_by_label("How to run", exact=True).select_option(mode)
        page.get_by_test_id("run-options").locator("summary").click()
    page.get_by_role("textbox", name="Message").fill(text)
    page.get_by_role("button", name="Send", exact=True).click()


def page_token(page: Any) -> str:
    return str(page.evaluate("sessionStorage.getItem('pa.devToken')"))


def reply(page: Any) -> Any:
    """The demo model's final answer (the message after the tool call)."""
    return page.get_by_test_id("assistant-message").filter(has_text="You said")


def reply_texts(page: Any) -> list[str]:
    return [normalise(t) for t in reply(page).get_by_test_id("message-body").all_inner_texts()]


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[*`]", "", text)).strip()


def drop_files(page: Any, files: list[tuple[str, str, bytes]]) -> None:
    """Drop files on the composer as a person dragging them from their desktop would (a DataTransfer of Files)."""
    encoded = [[name, kind, base64.b64encode(data).decode()] for name, kind, data in files]
    transfer = page.evaluate_handle(
        """(files) => {
            const transfer = new DataTransfer();
            for (const [name, type, data] of files) {
                const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
                transfer.items.add(new File([bytes], name, { type }));
            }
            return transfer;
        }""",
        encoded,
    )
    composer = page.get_by_test_id("composer")
    composer.dispatch_event("dragover", {"dataTransfer": transfer})
    composer.dispatch_event("drop", {"dataTransfer": transfer})
