"""How a file goes back to the browser: the chat's image types inline with their own type, anything else as a
download, under a `Content-Disposition` a quote, a path or a non-ASCII name cannot break."""

from __future__ import annotations

import pytest

from personal_agent.attachments.delivery import delivery


@pytest.mark.parametrize("content_type", ["image/png", "image/jpeg", "image/gif", "IMAGE/WEBP"])
def test_the_chats_image_types_are_inline_with_their_own_type(content_type: str) -> None:
    found = delivery(content_type, "photo.png")
    assert (found.content_type, found.disposition) == (content_type.lower(), "inline")
    assert found.header.startswith('inline; filename="photo.png"')


@pytest.mark.parametrize(
    ("content_type", "served"),
    [
        ("text/html", "text/html"),
        ("text/html; charset=utf-8", "text/html"),
        ("image/svg+xml", "image/svg+xml"),
        ("application/pdf", "application/pdf"),
        ("", "application/octet-stream"),
    ],
)
def test_anything_else_is_a_download(content_type: str, served: str) -> None:
    found = delivery(content_type, "page.html")
    assert (found.content_type, found.disposition) == (served, "attachment")
    assert found.header.startswith("attachment;")


def test_the_name_cannot_break_the_header() -> None:
    header = delivery("text/plain", 'C:\\temp\\rés"umé;\r\nX-Evil: 1.txt').header
    assert "\r" not in header and "\n" not in header
    plain, encoded = header.split("; ")[1:]
    assert plain == 'filename="r_s_um_X-Evil_ 1.txt"'
    assert encoded == "filename*=UTF-8''r%C3%A9s%22um%C3%A9%3B%0D%0AX-Evil%3A%201.txt"
