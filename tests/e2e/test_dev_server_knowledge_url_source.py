"""A single web page as a knowledge source (issue 36, item 4: `kind: "url"`) on `pa dev` over HTTP, the page served
on loopback (allow-listed for the address checks, as an operator would an internal site): the page is crawled into
a named collection and found by search; a re-sync asks with its ETag and an unchanged page costs a 304; a new ETag
over the same content is fetched but not re-embedded (its content hash is the same: the document and its chunks
stay as they were, and the next sync asks with the new ETag); changed content updates the same document in place;
deleting the source removes its document."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.knowledge_sources import documents, eventually, found, new_collection, ready, synced
from tests.e2e.loopback_site import Site
from tests.e2e.pa_dev import DevServer, running_pa_dev

PAGE = "/policies/leave.html"


def _page(days: str) -> str:
    return f"<html><head><title>Leave</title></head><body><p>Every employee has {days} days of leave.</p></body></html>"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    served = Site({PAGE: _page("twenty-five")})
    server = served.serve()
    try:
        yield served
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, site: Site) -> Iterator[DevServer]:
    extra = {"PA_WEB_FETCH_ALLOW_HOSTS": f"127.0.0.1:{site.port}"}
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-url-source"), env_extra=extra) as dev:
        yield dev


def _counts(last: dict[str, Any]) -> tuple[int, ...]:
    return last["added"], last["updated"], last["removed"], last["unchanged"], last["failed"]


@pytest.mark.timeout(420)
def test_a_page_is_crawled_resynced_by_etag_and_not_reembedded_when_unchanged(server: DevServer, site: Site) -> None:
    url = f"http://127.0.0.1:{site.port}{PAGE}"
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        policies = new_collection(http, "Policies")
        created = http.post("/api/v1/knowledge/sources", json={"kind": "url", "url": url, "collection": policies})
        assert created.status_code == 201, created.text
        source = created.json()
        assert (source["kind"], source["url"], source["allow_hosts"]) == ("url", url, [f"127.0.0.1:{site.port}"])
        first = eventually(lambda: synced(http, source["id"], None), "the first crawl")
        assert _counts(first) == (1, 0, 0, 0, 0)
        doc = eventually(lambda: ready(http, policies, {"leave.html"}), "leave.html ready")["leave.html"]
        hits = eventually(lambda: found(http, policies, "how many days of leave"), "the page found")
        assert "twenty-five days of leave" in hits[0]["text"] and hits[0]["filename"] == "leave.html"
        chunks = sorted(h["chunk_id"] for h in hits)

        def resync(after: str) -> dict[str, Any]:
            site.requests.clear()
            assert http.post(f"/api/v1/knowledge/sources/{source['id']}/sync").status_code == 202
            return dict(eventually(lambda: synced(http, source["id"], after), "a re-sync"))

        def unchanged() -> None:
            """The document and its chunks as the first crawl left them: nothing was re-embedded."""
            assert documents(http, policies)["leave.html"]["updated_at"] == doc["updated_at"]
            assert sorted(h["chunk_id"] for h in found(http, policies, "how many days of leave")) == chunks

        # Nothing changed: asked with the page's ETag, answered 304.
        second = resync(first["at"])
        assert _counts(second) == (0, 0, 0, 1, 0)
        ((path, asked_with, status),) = site.requests
        assert (path, status) == (PAGE, 304) and asked_with
        unchanged()

        # A new ETag, the same page (a redeploy): fetched whole, but its content hash is the same.
        site.etags[PAGE] = '"redeployed-1"'
        third = resync(second["at"])
        assert _counts(third) == (0, 0, 0, 1, 0)
        assert [(p, s) for p, _, s in site.requests] == [(PAGE, 200)]
        unchanged()
        fourth = resync(third["at"])  # ... and the new ETag is what the next sync asks with
        assert _counts(fourth) == (0, 0, 0, 1, 0) and site.requests == [(PAGE, '"redeployed-1"', 304)]

        # The page changes: the same document is updated in place, the old text is gone from search.
        site.etags.clear()
        site.pages[PAGE] = _page("thirty")
        fifth = resync(fourth["at"])
        assert _counts(fifth) == (0, 1, 0, 0, 0)
        eventually(
            lambda: any("thirty days" in h["text"] for h in found(http, policies, "how many days of leave")),
            "the changed page found",
        )
        assert not any("twenty-five" in h["text"] for h in found(http, policies, "how many days of leave"))
        assert documents(http, policies)["leave.html"]["id"] == doc["id"]

        assert http.delete(f"/api/v1/knowledge/sources/{source['id']}").status_code == 204
        assert documents(http, policies) == {}
