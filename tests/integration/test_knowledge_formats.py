"""The formats of issue 36 end to end on moto S3 + SQS (presigned POST, the ingest queue, the ingest function
in-process, the parse child): a scanned page with no text layer is read by OCR and found by search, a workbook row
is found by a question about it, and a passage keeps its document's classification whatever the format."""

from __future__ import annotations

from typing import Any

import httpx

from tests.auth import auth_headers
from tests.knowledge import upload_and_wait
from tests.knowledge_formats import PPTX, STAFF, XLSX, make_eml, make_pptx, make_xlsx, scanned_pdf, text_image

SCAN = ["Warranty claims must be filed", "within ninety days of delivery,", "together with the original receipt."]


async def _search(http: httpx.AsyncClient, headers: dict[str, str], q: str, k: int = 3) -> list[dict[str, Any]]:
    found = await http.get("/api/v1/knowledge/search", headers=headers, params={"q": q, "k": k})
    assert found.status_code == 200, found.text
    return list(found.json()["items"])


async def test_a_scanned_pdf_is_read_by_ocr_and_found(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    data = scanned_pdf(SCAN)
    import io

    from pypdf import PdfReader

    assert not (PdfReader(io.BytesIO(data)).pages[0].extract_text() or "").strip()  # no text layer: only OCR reads it
    doc = await upload_and_wait(http, headers, tenant, "warranty-scan.pdf", "application/pdf", data)
    assert (doc["status"], doc["pages"], doc["error"]) == ("ready", 1, None), doc

    found = await _search(http, headers, "how long do I have to file a warranty claim?")
    assert found[0]["document_id"] == doc["id"] and found[0]["page"] == 1
    assert "ninety days of delivery" in found[0]["text"]


async def test_a_workbook_row_is_found_by_a_question_about_it(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    doc = await upload_and_wait(
        http,
        headers,
        tenant,
        "staff.xlsx",
        XLSX,
        make_xlsx(STAFF),
        collection="personal",
        classification="confidential",
    )
    assert doc["status"] == "ready", doc

    found = await _search(http, headers, "which office does Chiara Rossi work from?")
    top = found[0]
    assert top["document_id"] == doc["id"] and top["section"].startswith("Staff, rows")
    assert "Name: Chiara Rossi | Department: Legal | Office: Milan" in top["text"]
    assert all(p["classification"] == "confidential" for p in found if p["document_id"] == doc["id"])
    # Quotes and backslashes in a question are words to the full-text leg, never tsquery syntax.
    odd = await _search(http, headers, "what's O'Reilly's \\ office in 'Milan'?")
    assert odd and odd[0]["document_id"] == doc["id"]


async def test_slides_mail_and_photos_are_searchable(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    deck = make_pptx([("Roadmap", "Ship the mobile app in Q3", "Remind everyone of the hiring freeze until May.")])
    pptx = await upload_and_wait(http, headers, tenant, "roadmap.pptx", PPTX, deck)
    mail = await upload_and_wait(
        http, headers, tenant, "move.eml", "message/rfc822", make_eml("Office move", "We move to the fourth floor.")
    )
    photo = await upload_and_wait(
        http, headers, tenant, "sign.jpg", "image/jpeg", text_image(["Parking garage closes at 22:00"], "JPEG")
    )
    assert [d["status"] for d in (pptx, mail, photo)] == ["ready"] * 3

    notes = (await _search(http, headers, "until when is hiring frozen?"))[0]
    assert notes["document_id"] == pptx["id"] and notes["section"] == "Slide 1: Roadmap" and notes["page"] == 1
    assert "Speaker notes: Remind everyone of the hiring freeze" in notes["text"]
    moved = (await _search(http, headers, "which floor are we moving to?"))[0]
    assert moved["document_id"] == mail["id"] and moved["section"] == "Office move"
    garage = (await _search(http, headers, "when does the parking garage close?"))[0]
    assert garage["document_id"] == photo["id"] and "22:00" in garage["text"]
