"""Attachments and memories in a real browser (Debian's headless Chromium) against a `pa dev` stack of their own.

An image dropped on the composer becomes a chip, uploads straight to the (moto) documents bucket, goes with the
message, and the offline demo model — tagged `vision` — says what it sees of it; the sent message shows its file,
also after a reload. A memory saved by the agent's `remember` tool (the demo's `/tool` command) shows up in
Settings → Memories, where it is edited and deleted; the page passes axe.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

import pytest

from tests.e2e.web_chat_stack import (
    describe_violations,
    screenshot,
    serious_violations,
)
from tests.e2e.web_chat_steps import new_chat, sign_in

pytestmark = pytest.mark.timeout(240)


def png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x80\x80" * 2))
        + chunk(b"IEND", b"")
    )


IMAGE = png()


def drop_image(page: Any, name: str) -> None:
    """Drop a PNG on the composer as a person dragging it from their desktop would (a DataTransfer with a File)."""
    data = base64.b64encode(IMAGE).decode()
    transfer = page.evaluate_handle(
        """([data, name]) => {
            const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
            const transfer = new DataTransfer();
            transfer.items.add(new File([bytes], name, { type: "image/png" }));
            return transfer;
        }""",
        [data, name],
    )
    composer = page.get_by_test_id("composer")
    composer.dispatch_event("dragover", {"dataTransfer": transfer})
    composer.dispatch_event("drop", {"dataTransfer": transfer})


def test_an_image_dropped_in_the_composer_goes_with_the_message(page: Any) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    drop_image(page, "pixel.png")
    chip = page.get_by_test_id("composer").get_by_test_id("attachment-chip")
    expect(chip).to_have_count(1)
    expect(chip).to_contain_text("pixel.png")
    expect(chip).to_contain_text(f"{len(IMAGE)} B")
    expect(chip).to_have_attribute("data-state", "ready")  # uploaded to the bucket through its presigned POST
    screenshot(page, "attachment-chip")

    page.get_by_role("textbox", name="Message").fill("what is in this picture?")
    page.get_by_role("button", name="Send", exact=True).click()
    expect(page.get_by_test_id("composer").get_by_test_id("attachment-chip")).to_have_count(0)
    sent = page.get_by_test_id("user-message").filter(has_text="what is in this picture?")
    expect(sent.get_by_test_id("attachment-chip")).to_contain_text("pixel.png")
    answer = page.get_by_test_id("assistant-message").filter(has_text="You said")
    expect(answer).to_contain_text(f"I can see 1 attached image(s) (image/png, {len(IMAGE)} bytes)")
    screenshot(page, "attachment-sent")

    page.reload()  # the stored transcript keeps the message's file
    sent = page.get_by_test_id("user-message").filter(has_text="what is in this picture?")
    expect(sent.get_by_test_id("attachment-chip")).to_contain_text("pixel.png")


def test_a_removed_chip_is_not_sent(page: Any) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    drop_image(page, "oops.png")
    chip = page.get_by_test_id("composer").get_by_test_id("attachment-chip")
    expect(chip).to_have_attribute("data-state", "ready")
    page.get_by_role("button", name="Remove oops.png").click()
    expect(chip).to_have_count(0)
    page.get_by_role("textbox", name="Message").fill("no picture this time")
    page.get_by_role("button", name="Send", exact=True).click()
    answer = page.get_by_test_id("assistant-message").filter(has_text="You said")
    expect(answer).to_contain_text("no picture this time")
    expect(answer).not_to_contain_text("attached image")
    expect(page.get_by_test_id("user-message").get_by_test_id("attachment-chip")).to_have_count(0)


def test_a_remembered_fact_is_seen_edited_and_deleted_in_settings(page: Any) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    new_chat(page)
    command = "/tool remember " + json.dumps({"fact": "Prefers metric units"})
    page.get_by_role("textbox", name="Message").fill(command)
    page.get_by_role("button", name="Send", exact=True).click()
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Saved to the user's memories")

    page.get_by_role("link", name="Settings").click()
    section = page.get_by_test_id("memories")
    memory = section.get_by_test_id("memory").filter(has_text="Prefers metric units")
    expect(memory).to_contain_text("saved by the assistant")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)
    screenshot(page, "settings-memories")

    memory.get_by_role("button", name="Edit memory: Prefers metric units").click()
    editor = section.get_by_role("textbox", name="Edit memory")
    expect(editor).to_be_focused()
    editor.fill("Prefers imperial units")
    section.get_by_role("button", name="Save", exact=True).click()
    expect(section.get_by_test_id("memory-text")).to_have_text(["Prefers imperial units"])
    page.reload()
    expect(section.get_by_test_id("memory-text")).to_have_text(["Prefers imperial units"])

    section.get_by_role("button", name="Delete memory: Prefers imperial units").click()
    expect(section.get_by_test_id("no-memories")).to_be_visible()
    expect(section.get_by_role("status")).to_have_text("Memory deleted.")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)
