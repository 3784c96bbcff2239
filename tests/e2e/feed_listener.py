"""The user's feed read on a thread, for the end-to-end tests that watch `pa dev` announce documents."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

import httpx


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
