"""Knowledge test helpers: documents made in the test (fpdf2, python-docx, pypdf), uploads through the presigned
POST the API hands out, and waiting for a document's status on its uploader's feed (the real signal a page uses)."""

from __future__ import annotations

import io
from typing import Any

import httpx

from tests.feed import FeedCursor

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def make_pdf(pages: list[str]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def encrypted_pdf(text: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(make_pdf([text]))).pages:
        writer.add_page(page)
    writer.encrypt(user_password="secret", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(sections: list[tuple[str, str]]) -> bytes:
    import docx

    document = docx.Document()
    for heading, text in sections:
        document.add_heading(heading, level=1)
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


async def register(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    filename: str,
    content_type: str,
    size: int,
    collection: str = "org",
    classification: str = "standard",
) -> dict[str, Any]:
    body = {
        "filename": filename,
        "content_type": content_type,
        "size": size,
        "collection": collection,
        "classification": classification,
    }
    created = await http.post("/api/v1/knowledge/documents", headers=headers, json=body)
    assert created.status_code == 201, created.text
    return dict(created.json())


def post_file(upload: dict[str, Any], data: bytes, content_type: str | None = None) -> httpx.Response:
    """The browser's multipart POST to S3: every signed field, then the file."""
    fields = dict(upload["fields"])
    if content_type is not None:
        fields["Content-Type"] = content_type
    return httpx.post(upload["url"], data=fields, files={"file": ("upload", data)}, timeout=30)


def wait_for_status(
    org_id: Any,
    user_id: Any,
    document_id: str,
    timeout: float = 60,
    embedding_model: str | None = None,
    after: str = "0",
) -> dict[str, Any]:
    """The first `ready` or `failed` announcement of the document on its uploader's feed (XREAD blocks on it);
    with `embedding_model`, the first that says the document's chunks are embedded by that model."""

    def finished(value: dict[str, Any]) -> bool:
        if value.get("document_id") != document_id or value.get("status") not in ("ready", "failed"):
            return False
        return embedding_model is None or value.get("embedding_model") == embedding_model

    cursor = FeedCursor(org_id, user_id, after=after)
    try:
        found = cursor.next("document_status", finished, timeout)
    finally:
        cursor.close()
    if found is None:
        raise AssertionError(f"document {document_id} did not finish within {timeout}s")
    return found


def feed_position(org_id: Any, user_id: Any) -> str:
    """The id of the newest entry on the user's feed (wait for what comes after it)."""
    cursor = FeedCursor(org_id, user_id)
    cursor.close()
    return cursor.last


async def upload_and_wait(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    tenant: Any,
    filename: str,
    content_type: str,
    data: bytes,
    **kwargs: Any,
) -> dict[str, Any]:
    """Register, upload, wait for the outcome; the document as the API then shows it."""
    import asyncio

    created = await register(http, headers, filename, content_type, len(data), **kwargs)
    sent = await asyncio.to_thread(post_file, created["upload"], data)
    assert sent.status_code in (200, 204), sent.text
    document_id = created["document"]["id"]
    await asyncio.to_thread(wait_for_status, tenant.org_id, tenant.user_id, document_id)
    shown = await http.get(f"/api/v1/knowledge/documents/{document_id}", headers=headers)
    assert shown.status_code == 200
    return dict(shown.json())


def upload_finished(
    http: httpx.Client, headers: dict[str, str], name: str, data: bytes, content_type: str = PDF, timeout: float = 120
) -> dict[str, Any]:
    """A knowledge document in the org's collection, uploaded through `pa dev`'s presigned form and polled (with a
    bound) until `ready` or `failed`; the document as the API then shows it."""
    import time

    body = {"filename": name, "content_type": content_type, "size": len(data)}
    made = http.post("/api/v1/knowledge/documents", headers=headers, json=body)
    assert made.status_code == 201, made.text
    form, document_id = made.json()["upload"], made.json()["document"]["id"]
    sent = httpx.post(form["url"], data=form["fields"], files={"file": (name, data)}, timeout=30)
    assert sent.status_code in (200, 201, 204), sent.text
    deadline, url = time.monotonic() + timeout, f"/api/v1/knowledge/documents/{document_id}"
    while (shown := http.get(url, headers=headers).json())["status"] not in ("ready", "failed"):
        assert time.monotonic() < deadline, shown
        time.sleep(0.2)
    return dict(shown)


def upload_ready(
    http: httpx.Client, headers: dict[str, str], name: str, data: bytes, content_type: str = PDF, timeout: float = 120
) -> str:
    """A knowledge document uploaded as `upload_finished` does, and `ready`; its id."""
    shown = upload_finished(http, headers, name, data, content_type, timeout)
    assert shown["status"] == "ready", shown
    return str(shown["id"])
