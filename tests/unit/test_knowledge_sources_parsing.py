"""What the knowledge sources read from outside: sitemaps (a urlset, an index, not XML), which URLs a source may
fetch (its allowed hosts, http(s) only), the ingest queue's messages (a sync job; a watched bucket's object events,
never mistaken for an upload of ours, even under a `documents/…` key), an object's type, the search filters' SQL
and the operator's bucket list."""

from __future__ import annotations

import json
import uuid

import pytest

from personal_agent.errors import InvalidInput
from personal_agent.knowledge.connectors.base import ItemFailed
from personal_agent.knowledge.connectors.s3 import content_type_of
from personal_agent.knowledge.connectors.web import allowed, sitemap_urls
from personal_agent.knowledge.messages import parse_message
from personal_agent.knowledge.search_filters import SearchFilters
from personal_agent.knowledge.source_events import ObjectEvent, SyncJob, parse_source_work, sync_job_body
from personal_agent.knowledge.sources import bucket_allowed

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def test_a_sitemap_lists_its_pages_and_an_index_its_sitemaps() -> None:
    urlset = (
        f"<urlset {NS}><url><loc> https://a.example/x </loc></url><url><loc>https://a.example/y</loc></url></urlset>"
    )
    assert sitemap_urls(urlset.encode()) == (["https://a.example/x", "https://a.example/y"], [])
    index = f"<sitemapindex {NS}><sitemap><loc>https://a.example/s1.xml</loc></sitemap></sitemapindex>"
    assert sitemap_urls(index.encode()) == ([], ["https://a.example/s1.xml"])
    with pytest.raises(ItemFailed, match="not valid XML"):
        sitemap_urls(b"<html>not a sitemap")


def test_a_source_fetches_only_http_urls_on_its_allowed_hosts() -> None:
    hosts = ["docs.example.com", "127.0.0.1:8080"]
    assert allowed("https://docs.example.com/guide", hosts)
    assert allowed("http://127.0.0.1:8080/page", hosts)
    assert not allowed("http://127.0.0.1:9090/page", hosts)
    assert not allowed("https://evil.example.com/", hosts)
    assert not allowed("ftp://docs.example.com/file", hosts)
    assert not allowed("https://docs.example.com.evil.example/", hosts)


def _record(event: str, bucket: str, key: str) -> dict[str, object]:
    return {"eventName": event, "s3": {"bucket": {"name": bucket}, "object": {"key": key, "eTag": "abc"}}}


def test_the_queue_carries_sync_jobs_and_watched_buckets_events_never_taken_for_uploads() -> None:
    org, source = uuid.uuid4(), uuid.uuid4()
    assert parse_source_work(sync_job_body(org, source)) == [SyncJob(org, source)]
    assert parse_message(sync_job_body(org, source)) == []
    spoof = f"documents/{uuid.uuid4()}/{uuid.uuid4()}/x.md"  # a tenant's key shaped like one of our documents
    body = json.dumps(
        {
            "Records": [
                _record("ObjectCreated:Put", "tenant-bucket", "hand+book/a.md"),
                _record("ObjectRemoved:Delete", "tenant-bucket", "handbook/b.md"),
                _record("ObjectCreated:Put", "tenant-bucket", spoof),
            ]
        }
    )
    assert parse_source_work(body) == [
        ObjectEvent("tenant-bucket", "hand book/a.md", True, "abc"),
        ObjectEvent("tenant-bucket", "handbook/b.md", False, "abc"),
        ObjectEvent("tenant-bucket", spoof, True, "abc"),
    ]
    assert parse_message(body) == []  # not an upload of ours
    assert parse_source_work("not json") == []


def test_an_objects_type_is_its_declared_one_when_accepted_else_its_extensions() -> None:
    assert content_type_of("a/notes.md", "binary/octet-stream") == "text/markdown"
    assert content_type_of("a/report.pdf", "application/pdf") == "application/pdf"
    assert content_type_of("a/page.html", "") == "text/html"
    assert content_type_of("a/photo.gif", "image/gif") == "image/gif"  # refused later: not a type we read


def test_search_filters_become_one_condition_on_the_chunks_document() -> None:
    assert SearchFilters().sql() == ("", {})
    document = uuid.uuid4()
    sql, params = SearchFilters(document_id=document, types=("markdown", "application/pdf")).sql()
    assert sql.startswith(" AND document_id IN (SELECT fd.id FROM knowledge_documents fd WHERE ")
    assert params == {"f_document": document, "f_types": ["text/markdown", "application/pdf"]}
    with pytest.raises(InvalidInput) as bad:
        SearchFilters(types=("gif",)).sql()
    assert bad.value.code == "invalid_type"


def test_only_listed_buckets_off_local() -> None:
    assert bucket_allowed("any", "", local=True)
    assert not bucket_allowed("any", "", local=False)
    assert bucket_allowed("b", "a, b", local=False)
    assert not bucket_allowed("c", "a,b", local=True)
