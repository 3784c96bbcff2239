"""Knowledge on `pa dev` as a user starts it (the `pa` console script, driven over HTTP only): a document is
registered, uploaded with the presigned POST to the local S3 (moto), announced `ready` on the user's feed once the
ingest queue's poller ran the ingest function, then found by search and by the agent's `search_knowledge` tool
(the offline demo model's `/tool` command)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from personal_agent.local.ports import free_port
from tests.knowledge import make_pdf

ROOT = Path(__file__).resolve().parents[2]
PA = Path(sys.executable).parent / "pa"
TEXT = "Holiday calendar: the office closes on the second Monday of August for the summer party."


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PA_", "DATABASE_", "REDIS_", "AWS_ENDPOINT"))}
    env.pop("PYTHONPATH", None)
    env.update(
        PA_DATA_DIR=str(tmp_path_factory.mktemp("pa-dev-knowledge")),
        PA_PORT=str(free_port()),
        PA_MOTO_PORT=str(free_port()),
        PA_VALKEY_PORT=str(free_port()),
        PA_DEMO_DELAY_MS="0",
    )
    proc = subprocess.Popen(
        [str(PA), "dev"], cwd=ROOT / "docs", env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if "running at" in line:
                break
        else:
            raise AssertionError(f"pa dev exited with {proc.wait()}")
        token = subprocess.run(
            [str(PA), "token", "--org", "kb", "--user", "alice"],
            cwd=ROOT / "docs",
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        yield f"http://127.0.0.1:{env['PA_PORT']}", {"Authorization": f"Bearer {token.splitlines()[-1]}"}
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)


class FeedListener:
    """The user's feed from "now", read on a thread: `opened` once the relay answered (its resume point is fixed
    then), every CUSTOM event on `events`."""

    def __init__(self, url: str, auth: dict[str, str]) -> None:
        self.url, self.auth = url, auth
        self.opened = threading.Event()
        self.closing = threading.Event()
        self.http: httpx.Client | None = None
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> FeedListener:
        self.thread.start()
        assert self.opened.wait(30), "the feed did not open"
        return self

    def __exit__(self, *exc: object) -> None:
        # Hang up: an open feed would hold the dev server's graceful shutdown until the stream's lifetime ends.
        self.closing.set()
        if self.http is not None:
            self.http.close()
        self.thread.join(timeout=10)

    def _read(self) -> None:
        self.http = httpx.Client(base_url=self.url, timeout=httpx.Timeout(30, read=None))
        try:
            with self.http.stream("GET", "/api/v1/feed", headers=self.auth) as stream:
                assert stream.status_code == 200
                self.opened.set()
                for line in stream.iter_lines():
                    if line.startswith("data:"):
                        self.events.put(json.loads(line[5:]))
        except (httpx.HTTPError, RuntimeError):
            if not self.closing.is_set():
                raise

    def until_done(self, document_id: str, timeout: float = 90) -> dict[str, Any]:
        """The document's `ready` or `failed` announcement."""
        while True:
            event = self.events.get(timeout=timeout)
            value = event.get("value") or {}
            if event.get("name") == "document_status" and value.get("document_id") == document_id:
                if value["status"] in ("ready", "failed"):
                    return dict(value)


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
