"""Ingest limits through the real pipeline (moto S3 + SQS, the ingest function in-process, issue 28 item 8): the
malicious files are made in the test and uploaded with the presigned POST. A zip bomb and a PDF past pypdf's
decompression limit end `failed: too_large` (not `processing` while SQS retries them into the DLQ); a PDF whose
pages share one content stream is indexed once; a document past the chunk cap keeps no chunk at all. A PPTX zip
bomb and an XLSX that spreads a huge grid end `failed: too_large` too (issue 36)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import psycopg
import pytest

from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.knowledge import DOCX, PDF, feed_position, make_docx, post_file, register, wait_for_status
from tests.knowledge_bombs import docx_bomb, inflating_stream_pdf, pptx_bomb, shared_stream_pdf, xlsx_spread_grid
from tests.knowledge_formats import PPTX, XLSX


def _finished(tenant: Any, document_id: str, after: str = "0") -> dict[str, Any]:
    """The document's `ready`/`failed` announcement, waited for up to 240 s (the machine may be busy) in blocking
    reads of 4 s: tests/feed.py's client has redis-py 8's default 5 s socket timeout, shorter than a longer XREAD."""
    deadline = time.monotonic() + 240
    while True:
        try:
            return wait_for_status(tenant.org_id, tenant.user_id, document_id, 4, after=after)
        except AssertionError:
            if time.monotonic() > deadline:
                raise


async def _upload(
    http: httpx.AsyncClient, headers: dict[str, str], tenant: Any, filename: str, content_type: str, data: bytes
) -> dict[str, Any]:
    """Register, upload, wait for `ready`/`failed` (a generous wait: the machine may be busy), then the document."""
    created = await register(http, headers, filename, content_type, len(data))
    sent = await asyncio.to_thread(post_file, created["upload"], data)
    assert sent.status_code in (200, 204), sent.text
    document_id = created["document"]["id"]
    await asyncio.to_thread(_finished, tenant, document_id)
    return dict((await http.get(f"/api/v1/knowledge/documents/{document_id}", headers=headers)).json())


def _chunks(admin_url: str, document_id: str) -> int:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT count(*) FROM knowledge_chunks WHERE document_id = %s", [document_id]).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize(
    ("filename", "content_type", "make", "reason"),
    [
        ("report.docx", DOCX, docx_bomb, "compressed more than"),
        ("scan.pdf", PDF, inflating_stream_pdf, "LimitReachedError"),
        ("deck.pptx", PPTX, pptx_bomb, "compressed more than"),
        ("grid.xlsx", XLSX, xlsx_spread_grid, "more than 2,000,000 cells"),
    ],
    ids=["docx-zip-bomb", "pdf-decompression-limit", "pptx-zip-bomb", "xlsx-spread-grid"],
)
async def test_a_decompression_bomb_ends_failed_too_large_with_nothing_indexed(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, filename: str, content_type: str, make: Any, reason: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    doc = await _upload(http, headers, tenant, filename, content_type, make())
    assert (doc["status"], doc["error"]["code"]) == ("failed", "too_large"), doc
    assert reason in doc["error"]["message"]
    assert doc["chunk_count"] == 0 and _chunks(admin_url, doc["id"]) == 0


async def test_pages_that_share_one_content_stream_are_indexed_once(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    data = shared_stream_pdf(lines=200)  # 730 pages, ~67 KB: one page's ~15 chunks would be indexed 730 times
    doc = await _upload(http, headers, tenant, "minutes.pdf", PDF, data)
    assert (doc["status"], doc["pages"]) == ("ready", 1), doc
    assert 0 < doc["chunk_count"] < 30 and _chunks(admin_url, doc["id"]) == doc["chunk_count"]


async def test_a_document_past_the_chunk_cap_fails_and_keeps_none_of_its_chunks(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    sections = [(f"Part {i}", f"Section {i} of the handbook explains rule number {i} in detail.") for i in range(6)]
    doc = await _upload(http, headers, tenant, "handbook.docx", DOCX, make_docx(sections))
    assert doc["status"] == "ready" and doc["chunk_count"] >= 6

    monkeypatch.setattr(get_settings(), "ingest_max_chunks", 5)  # the ingest function runs in this process
    position = await asyncio.to_thread(feed_position, tenant.org_id, tenant.user_id)
    again = await http.post(f"/api/v1/knowledge/documents/{doc['id']}/reindex", headers=headers)
    assert again.status_code == 202, again.text
    done = await asyncio.to_thread(_finished, tenant, doc["id"], position)
    assert (done["status"], done["error"]["code"]) == ("failed", "too_large")
    shown = (await http.get(f"/api/v1/knowledge/documents/{doc['id']}", headers=headers)).json()
    assert (shown["status"], shown["error"]["code"], shown["chunk_count"]) == ("failed", "too_large", 0)
    assert _chunks(admin_url, doc["id"]) == 0  # the earlier version's chunks went too: never half-indexed
