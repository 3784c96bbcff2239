"""OCR on AWS through Amazon Textract (issue 36; `PA_OCR_BACKEND=textract`, as the template sets for the ingest
function), against moto's Textract: a scanned PDF uploaded through the pipeline has its page image sent to
`DetectDocumentText` (the image arrives, pixel for pixel), and the LINE blocks Textract answers become the chunk's
text, found by search; WORD blocks and lines below the confidence floor are not text. moto answers every call with
the blocks its backend holds, which the test sets (moto's documented way to script Textract)."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from moto.textract.models import TextractBackend
from moto.textract.responses import TextractResponse
from PIL import Image

from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.knowledge import upload_and_wait
from tests.knowledge_formats import scanned_pdf, text_image

SCAN = ["Parcel lockers open", "at six in the morning."]
LINES = ["Parcel lockers open at six in the morning", "and close at ten at night."]


def _block(kind: str, text: str, confidence: float = 99.0) -> dict[str, Any]:
    return {"BlockType": kind, "Text": text, "Confidence": confidence, "Id": text[:8]}


@pytest.fixture
def textract(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """The Textract backend selected, moto's answer scripted, and the document bytes each call sent."""
    sent: list[bytes] = []
    answer = [_block("PAGE", ""), *(_block("LINE", t) for t in LINES), _block("WORD", "Parcel")]
    answer.append(_block("LINE", "smudge of a stamp", confidence=12.0))
    original = TextractResponse.detect_document_text

    def recorded(self: TextractResponse) -> str:
        sent.append(base64.b64decode(json.loads(self.body)["Document"]["Bytes"]))
        return original(self)

    monkeypatch.setattr(TextractBackend, "BLOCKS", answer)
    monkeypatch.setattr(TextractResponse, "detect_document_text", recorded)
    monkeypatch.setenv("PA_OCR_BACKEND", "textract")
    get_settings.cache_clear()
    try:
        yield sent
    finally:
        get_settings.cache_clear()


def _pixels(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("L").tobytes()


async def test_a_scan_is_read_by_textract_and_found(
    http: httpx.AsyncClient, make_tenant: Any, textract: list[bytes]
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    doc = await upload_and_wait(http, headers, tenant, "lockers.pdf", "application/pdf", scanned_pdf(SCAN))
    assert (doc["status"], doc["pages"], doc["error"]) == ("ready", 1, None), doc

    (image,) = textract  # one call, with the page's image
    assert _pixels(image) == _pixels(text_image(SCAN))

    found = await http.get(
        "/api/v1/knowledge/search", params={"q": "when do the parcel lockers close?"}, headers=headers
    )
    assert found.status_code == 200, found.text
    top = found.json()["items"][0]
    assert top["document_id"] == doc["id"] and top["page"] == 1
    assert "Parcel lockers open at six in the morning and close at ten at night." in " ".join(top["text"].split())
    assert "smudge" not in top["text"]
