"""What the knowledge sources' tests on `pa dev` ask the API (issue 36, item 4): a named collection, its documents
and search, a source's last sync, each waited for with a bound (a source syncs through a queue and a worker)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx


def eventually(check: Callable[[], Any], what: str, timeout: float = 90) -> Any:
    """Ask until `check` answers something truthy (the pipeline is asynchronous: a queue and a worker)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = check()
        if answer:
            return answer
        time.sleep(0.25)
    raise AssertionError(f"not within {timeout}s: {what}")


def new_collection(http: httpx.Client, name: str) -> str:
    created = http.post("/api/v1/knowledge/collections", json={"name": name})
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def documents(http: httpx.Client, collection: str) -> dict[str, dict[str, Any]]:
    """The collection's documents by file name."""
    listed = http.get("/api/v1/knowledge/documents", params={"collection": collection})
    assert listed.status_code == 200, listed.text
    return {d["filename"]: d for d in listed.json()["items"]}


def ready(http: httpx.Client, collection: str, names: set[str]) -> dict[str, dict[str, Any]] | None:
    """The collection's documents once they are exactly `names`, all ready (else None)."""
    docs = documents(http, collection)
    return docs if set(docs) == names and all(d["status"] == "ready" for d in docs.values()) else None


def found(http: httpx.Client, collection: str, q: str) -> list[dict[str, Any]]:
    """What a search of the collection finds (its passages)."""
    answer = http.get("/api/v1/knowledge/search", params={"q": q, "collection": collection})
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


def synced(http: httpx.Client, source_id: str, after: str | None) -> dict[str, Any] | None:
    """The source's last sync once it is a newer one than `after` (its `at`), else None."""
    last = http.get(f"/api/v1/knowledge/sources/{source_id}").json()["last_sync"]
    return last if last is not None and last["at"] != after else None
