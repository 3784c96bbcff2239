"""A large sitemap syncs in bounded chunks (issue 36): the source is listed once, then each ingest invocation brings
at most `PA_KNOWLEDGE_SYNC_CHUNK` pages in step and queues the next chunk on the ingest queue (moto SQS, polled by
the ingest function as on AWS) until none is left; a re-crawl updates, keeps and removes in chunks too. The pages
are served on loopback (allow-listed as an operator would an internal site)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.e2e.loopback_site import Site

PAGES, CHUNK = 40, 6


@pytest.fixture
def site(monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    served = Site({f"/p/{n}.html": f"<html><body><p>Page {n} of the handbook.</p></body></html>" for n in range(PAGES)})
    server = served.serve()
    monkeypatch.setenv("PA_WEB_FETCH_ALLOW_HOSTS", f"127.0.0.1:{served.port}")
    monkeypatch.setenv("PA_KNOWLEDGE_SYNC_CHUNK", str(CHUNK))
    get_settings.cache_clear()
    try:
        yield served
    finally:
        server.shutdown()
        get_settings.cache_clear()


def _stored_report(admin_url: str, source_id: str) -> dict[str, Any] | None:
    """The last sync as stored (with how many invocations it took), None before one finished."""
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT last_sync, sync_cursor FROM knowledge_sources WHERE id = %s", [source_id]).fetchone()
    assert row is not None
    return dict(row[0]) if row[0] and row[1] is None else None


async def _synced(admin_url: str, source_id: str, after: str | None) -> dict[str, Any]:
    for _ in range(1200):  # chunks run one queue message at a time
        report = _stored_report(admin_url, source_id)
        if report is not None and report["at"] != after:
            return report
        await asyncio.sleep(0.1)
    raise AssertionError(f"the source did not finish syncing: {_stored_report(admin_url, source_id)}")


def _fetched(site: Site) -> list[str]:
    return [path for path, _, status in site.requests if path.startswith("/p/") and status == 200]


async def test_a_large_sitemap_syncs_in_chunks_and_a_recrawl_too(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, site: Site
) -> None:
    tenant = make_tenant(("org-admin",))
    headers = auth_headers(tenant, ("org-admin",))
    base = f"http://127.0.0.1:{site.port}"
    site.sitemap[:] = [f"{base}/p/{n}.html" for n in range(PAGES)]
    collection = await http.post("/api/v1/knowledge/collections", json={"name": "Handbook"}, headers=headers)
    assert collection.status_code == 201, collection.text
    body = {"kind": "sitemap", "collection": collection.json()["id"], "url": f"{base}/sitemap.xml"}
    created = await http.post("/api/v1/knowledge/sources", json=body, headers=headers)
    assert created.status_code == 201, created.text
    source_id = created.json()["id"]

    first = await _synced(admin_url, source_id, None)
    assert (first["added"], first["failed"], first["removed"]) == (PAGES, 0, 0), first
    assert first["chunks"] == math.ceil(PAGES / CHUNK)  # at most CHUNK pages per invocation
    assert sorted(_fetched(site)) == sorted(f"/p/{n}.html" for n in range(PAGES))  # each page once
    assert (await http.get(f"/api/v1/knowledge/sources/{source_id}", headers=headers)).json()["last_sync"][
        "added"
    ] == PAGES

    # The re-crawl: 10 pages gone from the sitemap, one changed; the rest answer 304 to their ETags.
    kept = PAGES - 10
    site.sitemap[:] = site.sitemap[:kept]
    site.pages["/p/0.html"] = "<html><body><p>Page zero, rewritten.</p></body></html>"
    site.requests.clear()
    assert (await http.post(f"/api/v1/knowledge/sources/{source_id}/sync", headers=headers)).status_code == 202
    second = await _synced(admin_url, source_id, first["at"])
    assert (second["added"], second["updated"], second["unchanged"], second["removed"]) == (0, 1, kept - 1, 10)
    # The 30 listed pages in 5 chunks, then the 10 removals in 2 (6 and 4).
    assert second["chunks"] == 7
    assert _fetched(site) == ["/p/0.html"]
    documents = await http.get(
        "/api/v1/knowledge/documents", params={"collection": collection.json()["id"]}, headers=headers
    )
    assert len(documents.json()["items"]) == kept
