"""A sent message's files open again, in a real browser (Debian's headless Chromium) against a `pa dev` stack of
its own: after a reload (so nothing is left of the files the composer held), the image's chip shows a thumbnail
drawn from the bytes fetched from the server (its presigned GET on the local S3, moto) that opens whole in the
image dialog, and the text file's chip downloads the file, with no console error or CSP refusal on the way."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pytest

from tests.e2e.web_chat_stack import describe_violations, screenshot, serious_violations
from tests.e2e.web_chat_steps import drop_files, new_chat, sign_in

pytestmark = pytest.mark.timeout(240)

GREY = 0x80
NOTES = b"Packing list: passport, charger, the blue notebook.\n"


def png() -> bytes:
    """A 2x2 PNG, every pixel the same grey."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0)
    rows = bytes([0, GREY, GREY]) * 2
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


IMAGE = png()


def centre_pixel(canvas: Any) -> list[int]:
    return list(
        canvas.evaluate(
            """(el) => Array.from(
                el.getContext("2d").getImageData(el.width >> 1, el.height >> 1, 1, 1).data
            )"""
        )
    )


def wait_drawn(page: Any, canvas: Any) -> None:
    page.wait_for_function(
        """(el) => el.getContext("2d").getImageData(el.width >> 1, el.height >> 1, 1, 1).data[3] === 255""",
        arg=canvas.element_handle(),
    )


def test_a_sent_image_shows_its_thumbnail_and_a_sent_file_opens(page: Any) -> None:
    from playwright.sync_api import expect

    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    fetched: list[tuple[str, int]] = []
    page.on("response", lambda r: fetched.append((r.url, r.status)) if "X-Amz-Signature=" in r.url else None)

    sign_in(page)
    new_chat(page)
    drop_files(page, [("pixel.png", "image/png", IMAGE), ("notes.txt", "text/plain", NOTES)])
    ready = page.get_by_test_id("composer").get_by_test_id("attachment-chip")
    expect(ready).to_have_count(2)
    for chip in ready.all():
        expect(chip).to_have_attribute("data-state", "ready")
    page.get_by_role("textbox", name="Message").fill("my packing notes and a picture")
    page.get_by_role("button", name="Send", exact=True).click()
    expect(page.get_by_test_id("assistant-message").filter(has_text="You said")).to_be_visible()

    page.reload()  # the composer's files are gone: whatever the chips show now came from the server
    sent = page.get_by_test_id("user-message").filter(has_text="my packing notes and a picture")
    image_chip = sent.get_by_test_id("attachment-chip").filter(has_text="pixel.png")
    thumb = image_chip.get_by_test_id("attachment-thumb")
    expect(thumb).to_be_visible()
    wait_drawn(page, thumb)  # once its bytes arrived from the bucket and decoded
    assert centre_pixel(thumb) == [GREY, GREY, GREY, 255]  # the PNG's grey, decoded from the fetched bytes
    assert any(status == 200 and "pixel.png" in url for url, status in fetched), fetched
    found = serious_violations(page)  # the chips' buttons (thumbnail, file name) have names people hear
    assert not found, describe_violations(found)

    image_chip.get_by_role("button", name="Open pixel.png").click()
    dialog = page.get_by_role("dialog", name="pixel.png")
    shown = dialog.get_by_test_id("attachment-preview")
    expect(shown).to_be_visible()
    wait_drawn(page, shown)
    assert centre_pixel(shown) == [GREY, GREY, GREY, 255]
    screenshot(page, "attachment-sent-image-open")
    dialog.get_by_role("button", name="Close", exact=True).click()
    expect(dialog).to_be_hidden()

    with page.expect_download() as downloading:
        sent.get_by_role("button", name="Download notes.txt").click()
    download = downloading.value
    assert download.suggested_filename == "notes.txt"
    with open(download.path(), "rb") as saved:
        assert saved.read() == NOTES
    assert any(status == 200 and "notes.txt" in url for url, status in fetched), fetched
    expect(page.get_by_role("alert")).to_have_count(0)
    assert not console_errors, console_errors
