"""Sources that keep a named collection in sync (issue 36, item 4), on `pa dev` over HTTP:

- an S3 prefix on the dev stack's moto: the first sync brings in what is there; the bucket's ObjectCreated /
  ObjectRemoved notifications (sent to the queue the source names) add, update and remove documents as objects
  come, change and go; a sync with nothing changed re-embeds nothing;
- a sitemap served on loopback (allow-listed for the address checks, as an operator would an internal site): the
  pages it lists on the source's hosts are crawled, a page on another host is never fetched (counted failed, with
  the reason); a re-crawl asks with If-None-Match, an unchanged page answers 304, a changed one is updated and a
  page gone from the sitemap is removed; its passages are untrusted content even for the person who added it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import httpx
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.knowledge_sources import documents, eventually, found, new_collection, ready, synced
from tests.e2e.loopback_site import Site
from tests.e2e.pa_dev import DevServer, running_pa_dev

DEMO = "offline:demo"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    served = Site({})
    server = served.serve()
    try:
        yield served
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, site: Site) -> Iterator[DevServer]:
    # Two items per chunk: every sync here runs in several ingest invocations, each queueing the next.
    extra = {"PA_WEB_FETCH_ALLOW_HOSTS": f"127.0.0.1:{site.port}", "PA_KNOWLEDGE_SYNC_CHUNK": "2"}
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-sources"), env_extra=extra) as dev:
        yield dev


def _found(http: httpx.Client, collection: str, q: str) -> list[str]:
    return [p["text"] for p in found(http, collection, q)]


@pytest.mark.timeout(420)
def test_an_s3_prefix_keeps_its_collection_in_step(server: DevServer) -> None:
    s3 = boto3.client(
        "s3", endpoint_url=server.aws_url, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    s3.create_bucket(Bucket="tenant-handbook")
    s3.put_object(Bucket="tenant-handbook", Key="handbook/leave.md", Body=b"# Leave\n\nTwenty days of leave a year.")
    s3.put_object(Bucket="tenant-handbook", Key="other/secret.md", Body=b"Outside the prefix: never synced.")
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=30) as http:
        handbook = new_collection(http, "Handbook")
        body = {"kind": "s3", "collection": "Handbook", "bucket": "tenant-handbook", "prefix": "handbook/"}
        created = http.post("/api/v1/knowledge/sources", json=body)
        assert created.status_code == 201, created.text
        source = created.json()
        assert (source["collection"], source["kind"]) == (handbook, "s3")
        first = eventually(lambda: synced(http, source["id"], None), "the first sync")
        assert (first["added"], first["failed"]) == (1, 0)
        docs = eventually(lambda: ready(http, handbook, {"leave.md"}), "leave.md ready")

        # The tenant points the bucket's notifications at the queue the source names: events keep it in step.
        events = ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"]
        rule = {"Key": {"FilterRules": [{"Name": "prefix", "Value": "handbook/"}]}}
        queue = {"QueueArn": source["events_queue_arn"], "Events": events, "Filter": rule}
        s3.put_bucket_notification_configuration(
            Bucket="tenant-handbook", NotificationConfiguration={"QueueConfigurations": [queue]}
        )
        s3.put_object(Bucket="tenant-handbook", Key="handbook/expenses.md", Body=b"# Expenses\n\nTaxis are refunded.")
        eventually(lambda: ready(http, handbook, {"leave.md", "expenses.md"}), "expenses.md added")
        s3.put_object(
            Bucket="tenant-handbook", Key="handbook/leave.md", Body=b"# Leave\n\nThirty days of leave a year."
        )
        eventually(lambda: any("Thirty days" in t for t in _found(http, handbook, "days of leave")), "leave.md updated")
        assert not any("Twenty days" in t for t in _found(http, handbook, "days of leave"))
        updated = documents(http, handbook)["leave.md"]
        assert updated["id"] == docs["leave.md"]["id"]  # the same document, updated in place
        s3.delete_object(Bucket="tenant-handbook", Key="handbook/expenses.md")
        eventually(lambda: ready(http, handbook, {"leave.md"}), "expenses.md removed")
        assert not any("Taxis" in t for t in _found(http, handbook, "taxis refunded"))

        # Sync now, with nothing changed: every object is unchanged and nothing is re-embedded.
        assert http.post(f"/api/v1/knowledge/sources/{source['id']}/sync").status_code == 202
        again = eventually(lambda: synced(http, source["id"], first["at"]), "the second sync")
        assert (again["added"], again["updated"], again["removed"], again["unchanged"]) == (0, 0, 0, 1)
        assert documents(http, handbook)["leave.md"]["updated_at"] == updated["updated_at"]
        assert "secret.md" not in documents(http, handbook)


def _untrusted_flags(http: httpx.Client, query: str) -> dict[str, bool]:
    """search_knowledge in a run (the demo model's `/tool` command): each passage's document and its label."""
    chat = http.post("/api/v1/chats", json={"title": "crawl"}).json()
    command = "/tool search_knowledge " + json.dumps({"query": query})
    started = http.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": command, "mode": "inline", "model": DEMO})
    assert started.status_code == 202, started.text
    with http.stream("GET", f"/api/v1/runs/{started.json()['run_id']}/events") as stream:
        for line in stream.iter_lines():
            event = json.loads(line[5:]) if line.startswith("data:") else {}
            if event.get("type") == "TOOL_CALL_RESULT":
                return {p["document"]: p["untrusted"] for p in json.loads(event["content"]) if "chunk_id" in p}
    raise AssertionError("the run returned no tool result")


@pytest.mark.timeout(420)
def test_a_sitemap_is_crawled_recrawled_with_etags_and_its_pages_are_untrusted(server: DevServer, site: Site) -> None:
    base = f"http://127.0.0.1:{site.port}"
    site.pages.update(
        {
            "/guide/install.html": (
                "<html><head><title>Install</title></head>"
                "<body><p>Install with the pelican installer.</p></body></html>"
            ),
            "/guide/upgrade.html": "<html><body><p>Upgrades keep your settings.</p></body></html>",
            "/guide/old.html": "<html><body><p>The legacy walrus API is deprecated.</p></body></html>",
            "/elsewhere.html": "<html><body><p>Never fetched.</p></body></html>",
        }
    )
    site.sitemap[:] = [f"{base}/guide/install.html", f"{base}/guide/upgrade.html", f"{base}/guide/old.html"]
    site.sitemap.append(f"http://localhost:{site.port}/elsewhere.html")  # another host: not on the allow-list
    with (
        httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http,
        FeedListener(server.url, server.auth) as feed,
    ):
        docs_id = new_collection(http, "Product docs")
        body = {"kind": "sitemap", "collection": docs_id, "url": f"{base}/sitemap.xml", "every": "rate(1 day)"}
        created = http.post("/api/v1/knowledge/sources", json=body)
        assert created.status_code == 201, created.text
        source = created.json()
        assert source["allow_hosts"] == [f"127.0.0.1:{site.port}"] and source["next_sync_at"] is not None
        first = eventually(lambda: synced(http, source["id"], None), "the first crawl")
        assert (first["added"], first["failed"]) == (3, 1)  # the page off the allow-list: failed, and why
        assert [e["item"] for e in first["errors"]] == [f"http://localhost:{site.port}/elsewhere.html"]
        assert "not on the source's allowed hosts" in first["errors"][0]["message"]
        docs = eventually(
            lambda: ready(http, docs_id, {"install.html", "upgrade.html", "old.html"}), "three pages ready"
        )
        assert feed.until_done(docs["install.html"]["id"])["status"] == "ready"  # announced to who added the source
        assert "/elsewhere.html" not in {path for path, _, _ in site.requests}
        assert any("pelican installer" in t for t in _found(http, docs_id, "how do I install"))
        flags = _untrusted_flags(http, "pelican installer")
        assert flags and flags.get("install.html") is True  # fetched from the web: untrusted, even for its adder

        site.pages["/guide/upgrade.html"] = "<html><body><p>Upgrades now need a backup first.</p></body></html>"
        site.sitemap.remove(f"{base}/guide/old.html")
        site.requests.clear()
        assert http.post(f"/api/v1/knowledge/sources/{source['id']}/sync").status_code == 202
        second = eventually(lambda: synced(http, source["id"], first["at"]), "the re-crawl")
        assert (second["added"], second["updated"], second["removed"], second["unchanged"]) == (0, 1, 1, 1)
        asked = {path: (etag, status) for path, etag, status in site.requests}
        assert asked["/guide/install.html"][1] == 304 and asked["/guide/install.html"][0]  # asked with its ETag
        eventually(lambda: ready(http, docs_id, {"install.html", "upgrade.html"}), "old.html removed")
        eventually(lambda: any("backup first" in t for t in _found(http, docs_id, "upgrade backup")), "upgrade.html")
        assert documents(http, docs_id)["install.html"]["updated_at"] == docs["install.html"]["updated_at"]

        assert http.delete(f"/api/v1/knowledge/sources/{source['id']}").status_code == 204
        assert documents(http, docs_id) == {}
        assert http.get(f"/api/v1/knowledge/sources/{source['id']}").status_code == 404
