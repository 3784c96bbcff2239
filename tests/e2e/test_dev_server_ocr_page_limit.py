"""OCR's per-page time limit on `pa dev` (issue 36, item 3): with `PA_OCR_PAGE_SECONDS` at 1 ms no page is
recognised in time. The limit reaches the parse child the ingest function starts: a PDF that is only a scan ends
`failed: too_large` naming the page (not `no_text`, not `corrupt`); a PDF with a text page and a scanned one is
`ready` with the text page, found by search, and the scan left out."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.pa_dev import running_pa_dev
from tests.knowledge import upload_finished
from tests.knowledge_formats import scanned_pdf, text_and_scan_pdf


@pytest.mark.timeout(420)
def test_a_scan_past_the_page_limit_is_left_out(tmp_path_factory: pytest.TempPathFactory) -> None:
    env = {"PA_OCR_PAGE_SECONDS": "0.001"}
    with (
        running_pa_dev(tmp_path_factory.mktemp("pa-dev-ocr-limit"), env_extra=env) as server,
        httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http,
    ):
        scan = upload_finished(http, {}, "lease-scan.pdf", scanned_pdf(["The lease of the Lyon office ends in 2027."]))
        assert (scan["status"], scan["error"]["code"]) == ("failed", "too_large"), scan
        assert "OCR of page 1 took more than 0.001 s" in scan["error"]["message"]
        assert scan["chunk_count"] == 0

        mixed = upload_finished(
            http, {}, "opening.pdf", text_and_scan_pdf("The Porto office opens at nine on weekdays.", ("Closed",))
        )
        assert mixed["status"] == "ready", mixed
        found = http.get("/api/v1/knowledge/search", params={"q": "when does the Porto office open"}).json()["items"]
        pages = {p["page"] for p in found if p["filename"] == "opening.pdf"}
        assert pages == {1} and any("opens at nine" in p["text"] for p in found)
