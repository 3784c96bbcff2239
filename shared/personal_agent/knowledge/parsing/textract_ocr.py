"""Text recognition on AWS with Amazon Textract (`PA_OCR_BACKEND=textract`): RapidOCR's onnxruntime and opencv make
the ingest function's zip too big, so there a scanned page or a photo is sent to Textract's `DetectDocumentText`
(synchronous, one image of at most 10 MB: PNG, JPEG or TIFF) and its LINE blocks, in Textract's reading order, are
the text.

The parser runs in a child process that holds no credentials (`isolated.py`), so it does not call Textract: it
leaves a token where an image's text goes and hands the image back (`defer`, `deferred`); the ingest worker, which
may call Textract, puts each image's text in its token's place (`fill`). Each call has the page limit as its read
timeout, at most `MAX_IMAGES` images of a document are read, and an image Textract cannot read (or a timeout)
leaves its text out (logged), as a local OCR timeout does."""

from __future__ import annotations

import base64
import logging
import re
from dataclasses import replace
from typing import Any

from personal_agent.knowledge.parsing.sections import Section

log = logging.getLogger("personal_agent.knowledge.ocr")
MAX_BYTES = 10 * 1024 * 1024
"""Textract's limit for a synchronous call's document bytes."""
MIN_CONFIDENCE = 50.0
"""Lines below this confidence (0-100) are dropped, as RapidOCR's below its score."""
MAX_IMAGES = 200
"""The most images of one document sent to Textract (a page each, about a second apiece)."""
MAX_CHARS_PER_IMAGE = 50_000
_TOKEN = re.compile("\x00ocr:([0-9]+)\x00")
_pending: list[bytes] = []
"""Images the parse child left for Textract, in token order."""


def defer(data: bytes) -> str:
    """In the parse child: the token that stands for this image's text until the worker fills it."""
    _pending.append(data)
    return f"\x00ocr:{len(_pending) - 1}\x00"


def deferred() -> list[str]:
    """In the parse child: the images left for Textract (base64, for the child's JSON answer)."""
    return [base64.b64encode(data).decode() for data in _pending]


def fill(sections: list[Section], images: list[str], seconds: float) -> list[Section]:
    """In the worker: each token replaced by the text Textract reads in its image."""
    texts: list[str] = []
    for number, image in enumerate(images):
        text = detect_text(base64.b64decode(image), seconds) if number < MAX_IMAGES else None
        texts.append((text or "")[:MAX_CHARS_PER_IMAGE])
    if len(images) > MAX_IMAGES:
        log.warning("a document has %d images to read; the first %d were", len(images), MAX_IMAGES)

    def text_of(match: re.Match[str]) -> str:
        number = int(match.group(1))
        return texts[number] if number < len(texts) else ""

    return [replace(s, text=_TOKEN.sub(text_of, s.text)) for s in sections]


def _client(seconds: float) -> Any:
    from personal_agent.aws_clients import aws_client

    return aws_client("textract", connect_timeout=5, read_timeout=seconds, retries={"max_attempts": 2})


def lines_of(answer: dict[str, Any]) -> str:
    """The text of a `DetectDocumentText` answer: its LINE blocks' text, one per line, in the order given."""
    blocks = answer.get("Blocks") or []
    lines = [b for b in blocks if b.get("BlockType") == "LINE" and b.get("Text")]
    return "\n".join(str(b["Text"]) for b in lines if float(b.get("Confidence", 100.0)) >= MIN_CONFIDENCE)


def detect_text(data: bytes, seconds: float) -> str | None:
    """The text Textract reads in one image; None when it cannot read it in time (the page is left out)."""
    from botocore.exceptions import BotoCoreError, ClientError

    if len(data) > MAX_BYTES:
        log.warning("an image of %d bytes is over Textract's %d: left out", len(data), MAX_BYTES)
        return None
    try:
        answer = _client(seconds).detect_document_text(Document={"Bytes": data})
    except ClientError as exc:
        log.warning("Textract could not read an image: %s", exc.response.get("Error", {}).get("Code"))
        return None
    except BotoCoreError as exc:  # a timeout or no connection
        log.warning("Textract did not answer for an image: %s", type(exc).__name__)
        return None
    return lines_of(answer)
