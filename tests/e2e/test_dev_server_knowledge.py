"""Knowledge on `pa dev` as a user starts it (the `pa` console script, driven over HTTP only): a document is
registered, uploaded with the presigned POST to the local S3 (moto), announced `ready` on the user's feed once the
ingest queue's poller ran the ingest function, then found by search and by the agent's `search_knowledge` tool
(the offline demo model's `/tool` command)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.pa_dev import running_pa_dev
from tests.knowledge import make_pdf

TEXT = "Holiday calendar: the office closes on the second Monday of August for the summer party."


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-knowledge"), org="kb") as server:
        yield server.url, server.auth


@pytest.mark.timeout(240)
def test_upload_becomes_ready_and_is_found_on_pa_dev(dev_server: tuple[str, dict[str, str]]) -> None:
    url, auth = dev_server
    data = make_pdf([TEXT])
    with httpx.Client(base_url=url, headers=auth, timeout=30) as http:
        body = {"filename": "calendar.pdf", "content_type": "application/pdf", "size": len(data)}
        created = http.post("/api/v1/knowledge/documents", json=body)
        assert created.status_code == 201, created.text
        upload, document_id = created.json()["upload"], created.json()["document"]["id"]
        with FeedListener(url, auth) as feed:
            sent = httpx.post(upload["url"], data=upload["fields"], files={"file": ("calendar.pdf", data)}, timeout=30)
            assert sent.status_code == 204, sent.text
            done = feed.until_done(document_id)
        assert done["status"] == "ready", done
        assert http.get(f"/api/v1/knowledge/documents/{document_id}").json()["status"] == "ready"

        found = http.get("/api/v1/knowledge/search", params={"q": "when is the summer party"}).json()["items"]
        assert found[0]["document_id"] == document_id and found[0]["citation"].startswith("calendar.pdf, p. 1")

        chat = http.post("/api/v1/chats", json={"title": "kb"}).json()
        message = '/tool search_knowledge {"query": "office closes in August"}'
        started = http.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": message, "mode": "inline"})
        assert started.status_code == 202, started.text
        results: list[str] = []
        with http.stream("GET", f"/api/v1/runs/{started.json()['run_id']}/events") as events:
            for line in events.iter_lines():
                if line.startswith("data:"):
                    event = json.loads(line[5:])
                    if event.get("type") == "TOOL_CALL_RESULT":
                        results.append(event["content"])
        assert results and "calendar.pdf, p. 1" in results[0] and "second Monday of August" in results[0]
