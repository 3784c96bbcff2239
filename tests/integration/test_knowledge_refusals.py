"""What the knowledge pipeline refuses: a corrupt or encrypted PDF ends `failed` with a reason and no chunk; the
presigned POST policy names the only type and size S3 accepts; moto 5.2 enforces none of a POST policy's
conditions (not the signature, not `content-length-range`, not `Content-Type`), so the ingest checks the stored
object again and refuses it there; bad requests get a 4xx with a stable code."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from typing import Any

import boto3
import httpx
import psycopg
import pytest
from botocore.exceptions import ClientError

from tests.auth import auth_headers
from tests.knowledge import PDF, encrypted_pdf, make_pdf, post_file, register, upload_and_wait, wait_for_status


def _chunks(admin_url: str, document_id: str) -> int:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT count(*) FROM knowledge_chunks WHERE document_id = %s", [document_id]).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (make_pdf(["Quarterly numbers."])[:300] + b"\x00garbage", "corrupt"),
        (encrypted_pdf("The launch date is secret."), "encrypted"),
    ],
    ids=["corrupt", "encrypted"],
)
async def test_an_unreadable_pdf_fails_with_a_reason_and_leaves_nothing(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, data: bytes, code: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    doc = await upload_and_wait(http, headers, tenant, "broken.pdf", PDF, data)
    assert doc["status"] == "failed" and doc["error"]["code"] == code and doc["error"]["message"]
    assert doc["chunk_count"] == 0 and _chunks(admin_url, doc["id"]) == 0
    found = await http.get("/api/v1/knowledge/search", headers=headers, params={"q": "launch date quarterly"})
    assert found.json()["items"] == []


def _policy(upload: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(base64.b64decode(upload["fields"]["policy"])))


async def test_the_presigned_policy_names_type_and_size_and_the_ingest_enforces_them_where_s3_does_not(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    data = make_pdf(["A small policy document."])
    created = await register(http, headers, "small.pdf", PDF, len(data))
    conditions = _policy(created["upload"])["conditions"]
    assert ["content-length-range", 1, len(data)] in conditions and {"Content-Type": PDF} in conditions
    assert created["upload"]["fields"]["key"].startswith(f"documents/{tenant.org_id}/{created['document']['id']}/")

    # Larger than declared: real S3 answers 400 EntityTooLarge; moto stores it, and the ingest refuses it.
    sent = await asyncio.to_thread(post_file, created["upload"], data + b"\n" * 4096)
    assert sent.status_code == 204  # moto: no POST policy check at all
    outcome = await asyncio.to_thread(wait_for_status, tenant.org_id, tenant.user_id, created["document"]["id"])
    assert (outcome["status"], outcome["error"]["code"]) == ("failed", "too_large")
    s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    with pytest.raises(ClientError):  # not kept
        s3.head_object(Bucket=os.environ["PA_DOCUMENTS_BUCKET"], Key=created["upload"]["fields"]["key"])
    assert _chunks(admin_url, created["document"]["id"]) == 0

    # Another type than declared (the policy's Content-Type condition): refused at ingest too.
    other = await register(http, headers, "page.pdf", PDF, 200)
    html = b"<html><body><p>" + b"x" * 150 + b"</p></body></html>"
    sent = await asyncio.to_thread(post_file, other["upload"], html, "text/html")
    assert sent.status_code == 204
    outcome = await asyncio.to_thread(wait_for_status, tenant.org_id, tenant.user_id, other["document"]["id"])
    assert (outcome["status"], outcome["error"]["code"]) == ("failed", "wrong_type")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"filename": "cat.gif", "content_type": "image/gif", "size": 10}, 415, "unsupported_type"),
        ({"filename": "big.pdf", "content_type": PDF, "size": 25 * 1024 * 1024 + 1}, 413, "too_large"),
        ({"filename": "a.pdf", "content_type": PDF, "size": 10, "collection": "team"}, 422, "invalid_collection"),
        ({"filename": "a.pdf", "content_type": PDF, "size": 10, "classification": "secret"}, 422, None),
    ],
    ids=["type", "size", "collection", "classification"],
)
async def test_a_bad_document_request_is_refused_with_a_code(
    http: httpx.AsyncClient, make_tenant: Any, body: dict[str, Any], status: int, code: str | None
) -> None:
    tenant = make_tenant()
    refused = await http.post("/api/v1/knowledge/documents", headers=auth_headers(tenant), json=body)
    assert refused.status_code == status, refused.text
    assert code is None or refused.json()["code"] == code
    listed = await http.get("/api/v1/knowledge/documents", headers=auth_headers(tenant))
    assert listed.json()["items"] == []  # nothing half-written
