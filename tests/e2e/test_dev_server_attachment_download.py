"""An attachment's content on `pa dev` as a user starts it (the `pa` console script, driven over HTTP only): a file
sent with a message is fetched again by its owner through `GET /attachments/{id}/download`, a short-lived presigned
GET on the local S3 (moto) that the web chat's origin may read (CORS). An image comes back inline with its own type;
an HTML page as a download (`Content-Disposition: attachment`), so it never renders in a browser; someone else's
file, in the same org or another, is a 404 like a missing one, also in a restricted chat; one whose knowledge
document was deleted is a 410."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer

pytestmark = pytest.mark.timeout(240)


def png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0)
    rows = b"\x00\x80\x80" * 2
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


IMAGE = png()
PAGE = b"<!doctype html><script>document.title = 'ran'</script><p>an uploaded page</p>"


def _attach(http: httpx.Client, chat_id: str, filename: str, content_type: str, data: bytes) -> str:
    body = {"filename": filename, "content_type": content_type, "size": len(data)}
    created = http.post(f"/api/v1/chats/{chat_id}/attachments", json=body)
    assert created.status_code == 201, created.text
    form = created.json()["upload"]
    sent = httpx.post(form["url"], data=form["fields"], files={"file": (filename, data, content_type)}, timeout=30)
    assert sent.status_code in (200, 201, 204), sent.text
    return str(created.json()["id"])


def _send(http: httpx.Client, chat_id: str, ids: list[str]) -> None:
    started = http.post(
        f"/api/v1/chats/{chat_id}/runs", json={"message": "here are my files", "mode": "inline", "attachments": ids}
    )
    assert started.status_code == 202, started.text
    with http.stream("GET", f"/api/v1/runs/{started.json()['run_id']}/events") as events:
        ends = [
            json.loads(line[5:])["type"] for line in events.iter_lines() if line.startswith("data:") and '"RUN_' in line
        ]
    assert ends[-1] == "RUN_FINISHED", ends


def _download(http: httpx.Client, attachment_id: str) -> dict[str, Any]:
    answer = http.get(f"/api/v1/attachments/{attachment_id}/download")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_the_owner_fetches_a_sent_file_and_no_one_else_can(dev_server: DevServer) -> None:
    web_origin = dev_server.url.rstrip("/")
    with httpx.Client(base_url=dev_server.url, headers=dev_server.auth, timeout=60) as http:
        chat = http.post("/api/v1/chats", json={"title": "files", "classification": "restricted"})
        assert chat.status_code == 201, chat.text
        chat_id = chat.json()["id"]
        image = _attach(http, chat_id, "pixel.png", "image/png", IMAGE)
        page = _attach(http, chat_id, "notes page.html", "text/html", PAGE)
        _send(http, chat_id, [image, page])

        shown = _download(http, image)
        assert (shown["content_type"], shown["disposition"], shown["filename"]) == ("image/png", "inline", "pixel.png")
        assert 0 < shown["expires_in"] <= 900
        assert shown["url"].startswith(dev_server.aws_url.rstrip("/"))  # the bucket, not the API: no bearer token
        got = httpx.get(shown["url"], headers={"Origin": web_origin}, timeout=30)
        assert got.status_code == 200 and got.content == IMAGE
        assert got.headers["content-type"] == "image/png"
        assert got.headers["content-disposition"].startswith("inline;")
        assert got.headers["access-control-allow-origin"] == web_origin  # the web chat's fetch may read it

        saved = _download(http, page)
        assert (saved["content_type"], saved["disposition"]) == ("text/html", "attachment")
        got = httpx.get(saved["url"], timeout=30)
        assert got.status_code == 200 and got.content == PAGE
        disposition = got.headers["content-disposition"]
        assert disposition.startswith('attachment; filename="notes page.html"'), disposition
        assert "filename*=UTF-8''notes%20page.html" in disposition

        # An SVG (a script-carrying image type) cannot be attached at all.
        files = f"/api/v1/chats/{chat_id}/attachments"
        svg = http.post(files, json={"filename": "x.svg", "content_type": "image/svg+xml", "size": 9})
        assert (svg.status_code, svg.json()["code"]) == (415, "unsupported_attachment")

        # Not uploaded yet: a clear 409, not a URL to nothing; a missing id: 404.
        pending = http.post(files, json={"filename": "later.png", "content_type": "image/png", "size": 9}).json()["id"]
        waiting = http.get(f"/api/v1/attachments/{pending}/download")
        assert (waiting.status_code, waiting.json()["code"]) == (409, "attachment_not_uploaded")
        missing = http.get("/api/v1/attachments/00000000-0000-4000-8000-000000000000/download")
        assert (missing.status_code, missing.json()["code"]) == (404, "attachment_not_found")

    # A colleague in the same org and a user of another org: 404, as for a file that does not exist.
    for other in (dev_server.auth_for("colleague", "user"), dev_server.auth_for("stranger", "user", org="elsewhere")):
        for attachment_id in (image, page):
            url = f"{dev_server.url}/api/v1/attachments/{attachment_id}/download"
            denied = httpx.get(url, headers=other, timeout=30)
            assert (denied.status_code, denied.json()["code"]) == (404, "attachment_not_found"), denied.text

    # The page's knowledge document deleted (Knowledge → delete): its file is gone, a clear 410.
    with httpx.Client(base_url=dev_server.url, headers=dev_server.auth, timeout=60) as http:
        document_id = http.get(f"/api/v1/attachments/{page}").json()["document_id"]
        assert http.delete(f"/api/v1/knowledge/documents/{document_id}").status_code == 204
        gone = http.get(f"/api/v1/attachments/{page}/download")
        assert (gone.status_code, gone.json()["code"]) == (410, "attachment_gone")
        assert http.get(f"/api/v1/attachments/{image}/download").status_code == 200
