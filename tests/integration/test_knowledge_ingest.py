"""Knowledge end to end on moto S3 + SQS: documents made in the test are uploaded through the presigned POST, the
bucket notifies the ingest queue, the queue's poller hands batches to the ingest function in-process, and search
finds the text by an exact phrase and by a paraphrase (offline WordLlama embedder)."""

from __future__ import annotations

import json
import os
from typing import Any

import boto3
import httpx
import psycopg

from tests.auth import auth_headers
from tests.knowledge import DOCX, PDF, make_docx, make_pdf, upload_and_wait

PDF_PAGES = [
    "Travel policy. Employees book economy class for flights shorter than six hours.",
    "Expense reports. Receipts must be submitted within thirty days of the purchase; the finance team reimburses "
    "approved claims every second Friday.",
]
DOCX_SECTIONS = [
    ("Onboarding", "New engineers receive a laptop and pair with a mentor during their first two weeks."),
    ("Security", "Production database credentials rotate every ninety days and live only in the secrets vault."),
]


async def _search(http: httpx.AsyncClient, headers: dict[str, str], q: str, **params: Any) -> list[dict[str, Any]]:
    found = await http.get("/api/v1/knowledge/search", headers=headers, params={"q": q, **params})
    assert found.status_code == 200, found.text
    return list(found.json()["items"])


async def test_a_pdf_and_a_docx_are_found_by_exact_phrase_and_by_paraphrase(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    pdf = await upload_and_wait(http, headers, tenant, "policies.pdf", PDF, make_pdf(PDF_PAGES))
    docx = await upload_and_wait(http, headers, tenant, "handbook.docx", DOCX, make_docx(DOCX_SECTIONS))
    assert (pdf["status"], pdf["pages"], docx["status"]) == ("ready", 2, "ready")
    assert pdf["chunk_count"] >= 2 and docx["chunk_count"] >= 2

    exact = await _search(http, headers, '"submitted within thirty days"')
    assert exact[0]["filename"] == "policies.pdf" and exact[0]["page"] == 2
    assert "thirty days" in exact[0]["text"] and exact[0]["citation"].startswith("policies.pdf, p. 2")

    # No word in common with the passage: only the embedding can find it.
    paraphrase = await _search(http, headers, "how often are passwords for live systems changed?", k=3)
    assert paraphrase[0]["filename"] == "handbook.docx" and paraphrase[0]["section"] == "Security"
    assert str(paraphrase[0]["chunk_id"]) in paraphrase[0]["citation"]

    listed = (await http.get("/api/v1/knowledge/documents", headers=headers)).json()["items"]
    assert {d["filename"] for d in listed} == {"policies.pdf", "handbook.docx"}


async def test_a_redelivered_upload_event_adds_no_chunks(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    doc = await upload_and_wait(http, headers, tenant, "policies.pdf", PDF, make_pdf(PDF_PAGES))
    with psycopg.connect(admin_url) as conn:
        before = conn.execute("SELECT count(*) FROM knowledge_chunks WHERE document_id = %s", [doc["id"]]).fetchone()
        key = conn.execute("SELECT object_key FROM knowledge_documents WHERE id = %s", [doc["id"]]).fetchone()
    assert before is not None and key is not None and before[0] == doc["chunk_count"]
    # S3 delivers at least once: the same ObjectCreated record again, straight to the function.
    from personal_agent.knowledge.worker import handle_message

    s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    head = s3.head_object(Bucket=os.environ["PA_DOCUMENTS_BUCKET"], Key=key[0])
    record = {
        "eventName": "ObjectCreated:Post",
        "s3": {"object": {"key": key[0], "size": head["ContentLength"], "eTag": head["ETag"].strip('"')}},
    }
    assert await handle_message(json.dumps({"Records": [record]})) == ["duplicate"]
    with psycopg.connect(admin_url) as conn:
        after = conn.execute("SELECT count(*) FROM knowledge_chunks WHERE document_id = %s", [doc["id"]]).fetchone()
    assert after == before


async def test_reindex_processes_the_stored_file_again(http: httpx.AsyncClient, make_tenant: Any) -> None:
    import asyncio

    from tests.knowledge import feed_position, register, wait_for_status

    tenant = make_tenant()
    headers = auth_headers(tenant)
    doc = await upload_and_wait(http, headers, tenant, "handbook.docx", DOCX, make_docx(DOCX_SECTIONS))
    position = await asyncio.to_thread(feed_position, tenant.org_id, tenant.user_id)
    again = await http.post(f"/api/v1/knowledge/documents/{doc['id']}/reindex", headers=headers)
    assert (again.status_code, again.json()["status"]) == (202, "processing")
    done = await asyncio.to_thread(wait_for_status, tenant.org_id, tenant.user_id, doc["id"], after=position)
    assert (done["status"], done["chunk_count"]) == ("ready", doc["chunk_count"])

    pending = await register(http, headers, "later.pdf", PDF, 100)
    refused = await http.post(f"/api/v1/knowledge/documents/{pending['document']['id']}/reindex", headers=headers)
    assert (refused.status_code, refused.json()["code"]) == (409, "not_uploaded")
    shown = await http.get(f"/api/v1/knowledge/documents/{pending['document']['id']}", headers=headers)
    assert shown.json()["status"] == "uploading"
