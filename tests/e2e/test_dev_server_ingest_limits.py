"""Ingest limits on `pa dev` as a user starts it (issue 28, item 8): `pa dev` runs the ingest function inside its
own process, so a document built to exhaust memory is parsed in a child with an address-space limit. A DOCX that
passes the archive checks but needs ~600 MB to parse, a DOCX zip bomb and a PDF past pypdf's decompression limit
all end `failed: too_large` (never `processing`), and `pa dev`'s own peak memory hardly moves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.knowledge import DOCX, PDF
from tests.knowledge_bombs import docx_bomb, inflating_stream_pdf, memory_hog_docx

PARSE_MEMORY_MB = 300


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {"PA_INGEST_PARSE_MEMORY_MB": str(PARSE_MEMORY_MB)}
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-ingest-limits"), org="limits", env_extra=env) as server:
        yield server


def _pa_dev_process(server: DevServer) -> psutil.Process:
    """The `pa dev` process itself (the one running the ingest function), found by its port setting."""
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if len(cmdline) >= 2 and Path(cmdline[-2]).name == "pa" and cmdline[-1] == "dev":
            try:
                if proc.environ().get("PA_PORT") == server.env["PA_PORT"]:
                    return proc
            except psutil.Error:
                continue
    raise AssertionError("pa dev's process not found")


def _peak_rss_mb(proc: psutil.Process) -> float:
    status = Path(f"/proc/{proc.pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024


def _upload(http: httpx.Client, server: DevServer, filename: str, content_type: str, data: bytes) -> dict[str, Any]:
    body = {"filename": filename, "content_type": content_type, "size": len(data)}
    created = http.post("/api/v1/knowledge/documents", json=body)
    assert created.status_code == 201, created.text
    upload, document_id = created.json()["upload"], created.json()["document"]["id"]
    with FeedListener(server.url, server.auth) as feed:
        sent = httpx.post(upload["url"], data=upload["fields"], files={"file": (filename, data)}, timeout=60)
        assert sent.status_code == 204, sent.text
        feed.until_done(document_id, timeout=240)
    return dict(http.get(f"/api/v1/knowledge/documents/{document_id}").json())


@pytest.mark.timeout(600)
def test_documents_built_to_exhaust_the_worker_end_too_large_on_pa_dev(dev_server: DevServer) -> None:
    pa_dev = _pa_dev_process(dev_server)
    with httpx.Client(base_url=dev_server.url, headers=dev_server.auth, timeout=30) as http:
        warm = _upload(http, dev_server, "note.docx", DOCX, memory_hog_docx(paragraphs=10))  # loads the embedder
        assert warm["status"] == "ready", warm
        before = _peak_rss_mb(pa_dev)
        cases = [
            ("heavy.docx", DOCX, memory_hog_docx(), f"{PARSE_MEMORY_MB} MB of memory"),
            ("bomb.docx", DOCX, docx_bomb(), "compressed more than"),
            ("scan.pdf", PDF, inflating_stream_pdf(), "LimitReachedError"),
        ]
        for filename, content_type, data, reason in cases:
            doc = _upload(http, dev_server, filename, content_type, data)
            assert (doc["status"], doc["error"]["code"], doc["chunk_count"]) == ("failed", "too_large", 0), doc
            assert reason in doc["error"]["message"]
        grown = _peak_rss_mb(pa_dev) - before
        assert grown < 150, f"pa dev's peak RSS grew by {grown:.0f} MB"  # in-process the heavy DOCX alone: ~600 MB
        assert http.get("/healthz").status_code == 200
