"""How a file goes back to its owner's browser: an image of a type the chat shows (PNG, JPEG, GIF, WebP) inline
with that type; anything else (HTML, SVG, a PDF, text) as a download (`Content-Disposition: attachment`), so an
uploaded page or script never renders as a document, wherever its URL is opened."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from personal_agent.attachments.kinds import IMAGE_TYPES

_NOT_PLAIN = re.compile(r"[^A-Za-z0-9 ._()+-]+")


@dataclass(frozen=True)
class Delivery:
    content_type: str
    disposition: Literal["inline", "attachment"]
    header: str
    """The `Content-Disposition` value, with the file's name (an ASCII fallback and RFC 5987's UTF-8 form)."""


def delivery(content_type: str, filename: str) -> Delivery:
    media = content_type.split(";", 1)[0].strip().lower()
    inline = media in IMAGE_TYPES
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip() or "file"
    plain = _NOT_PLAIN.sub("_", name).strip() or "file"
    disposition: Literal["inline", "attachment"] = "inline" if inline else "attachment"
    header = f"{disposition}; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"
    return Delivery(media if inline else (media or "application/octet-stream"), disposition, header)
