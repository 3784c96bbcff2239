"""The formats of issue 36 on `pa dev` as a user starts it (the `pa` console script, over HTTP only): a CSV, a
workbook, a deck, an e-mail, a photo and a scanned PDF are registered with their content types, uploaded with the
presigned POST to the local S3, ingested by the ingest function the queue's poller runs (OCR in the parse child for
the photo and the scan), announced `ready` on the feed, and each is found by a question about what it holds."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.pa_dev import running_pa_dev
from tests.knowledge_formats import (
    PPTX,
    STAFF,
    XLSX,
    make_csv,
    make_eml,
    make_pptx,
    make_xlsx,
    scanned_pdf,
    text_image,
)

PRICES = [("Product", "Unit price", "Supplier"), ("Oak desk", "420 EUR", "Nordwood"), ("Desk lamp", "35 EUR", "Lumen")]
UPLOADS = [
    ("prices.csv", "text/csv", make_csv(PRICES), "how much does the oak desk cost?", "Unit price: 420 EUR"),
    ("staff.xlsx", XLSX, make_xlsx(STAFF), "when did Dmitri Volkov start?", "Start date: 2023-06-01"),
    (
        "offsite.pptx",
        PPTX,
        make_pptx([("Offsite", "Two days in Sintra in October", "Book the coach for forty people.")]),
        "how many people does the coach need to carry?",
        "Book the coach for forty people",
    ),
    (
        "badges.eml",
        "message/rfc822",
        make_eml("New badges", "Collect your new access badge at the front desk before Friday."),
        "where do I pick up the new access badge?",
        "front desk",
    ),
    ("menu.png", "image/png", text_image(["Soup of the day: pumpkin"]), "what is the soup of the day?", "pumpkin"),
    (
        "lease-scan.pdf",
        "application/pdf",
        scanned_pdf(["The lease of the Lyon office", "ends on 31 December 2027."]),
        "when does the Lyon office lease end?",
        "December",
    ),
]


UNHURRIED_OCR = {"PA_OCR_PAGE_SECONDS": "300"}  # what is read, not how fast: a loaded machine took 28-40 s a page


@pytest.mark.timeout(420)
def test_every_new_format_is_ingested_and_found_on_pa_dev(tmp_path_factory: pytest.TempPathFactory) -> None:
    with (
        running_pa_dev(tmp_path_factory.mktemp("pa-dev-kb-formats"), org="kbf", env_extra=UNHURRIED_OCR) as server,
        httpx.Client(base_url=server.url, headers=server.auth, timeout=30) as http,
        FeedListener(server.url, server.auth) as feed,
    ):
        ids: dict[str, str] = {}
        for filename, content_type, data, _, _ in UPLOADS:
            body = {"filename": filename, "content_type": content_type, "size": len(data)}
            created = http.post("/api/v1/knowledge/documents", json=body)
            assert created.status_code == 201, created.text
            upload = created.json()["upload"]
            sent = httpx.post(upload["url"], data=upload["fields"], files={"file": (filename, data)}, timeout=30)
            assert sent.status_code == 204, sent.text
            ids[filename] = created.json()["document"]["id"]
        for filename, document_id in ids.items():
            done = feed.until_done(document_id, timeout=180)
            assert done["status"] == "ready", (filename, done)

        for filename, _, _, question, answer in UPLOADS:
            found = http.get("/api/v1/knowledge/search", params={"q": question, "k": 3}).json()["items"]
            top = found[0]
            assert top["document_id"] == ids[filename], (question, [(f["filename"], f["text"][:80]) for f in found])
            assert answer in top["text"] and top["citation"].startswith(filename)
