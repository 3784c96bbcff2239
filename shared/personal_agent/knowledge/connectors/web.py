"""Web pages: one page (`url`) or every page of a sitemap (`sitemap`, a sitemap index one level deep). Every
request goes through the address checks of `web_fetch` (`net/public_address.py`: public addresses only unless
`PA_WEB_FETCH_ALLOW_HOSTS` lets an internal host through, metadata never, the connection pinned to the checked
address, each redirect checked again) and, besides, only to the source's allowed hosts; a listed page refused
by either is counted failed in the sync's report with the reason, and the rest syncs. A re-crawl asks with
`If-None-Match`/`If-Modified-Since`, so an unchanged page costs a 304. The text is untrusted for every reader."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import httpx

from personal_agent.knowledge.connectors.base import MAX_ITEMS, Fetched, ItemFailed, RemoteItem
from personal_agent.knowledge.formats import MAX_UPLOAD_BYTES
from personal_agent.knowledge.sources_store import Item, Source
from personal_agent.net.public_address import AddressRefused, checked_address, parse_allow_hosts, pinned_request
from personal_agent.settings import get_settings

MAX_SITEMAP_BYTES = 5_000_000
MAX_REDIRECTS = 5
TIMEOUT_SECONDS = 15.0
_HEADERS = {"User-Agent": "PersonalAgent-knowledge-sync/1", "Accept": "text/html,text/plain;q=0.9,*/*;q=0.5"}
_TYPES = {
    "text/html": "text/html",
    "application/xhtml+xml": "text/html",
    "text/plain": "text/plain",
    "text/markdown": "text/markdown",
    "application/pdf": "application/pdf",
}


def host_of(url: str) -> str:
    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port}" if parsed.port else str(parsed.host)


def allowed(url: str, allow_hosts: list[str]) -> bool:
    """Whether the source may fetch `url`: http(s), on one of its allowed hosts (`host` or `host:port`)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return False
    hosts = {h.lower() for h in allow_hosts}
    return parsed.scheme in ("http", "https") and (str(parsed.host).lower() in hosts or host_of(url).lower() in hosts)


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: httpx.Headers
    body: bytes


async def _get(url: str, source: Source, headers: dict[str, str], limit: int) -> _Answer:
    """GET `url` with the address checks and the source's allow-list on every hop; the body read (at most
    `limit` bytes) unless the answer is a 304."""
    internal = parse_allow_hosts(get_settings().web_fetch_allow_hosts)
    if not allowed(url, source.allow_hosts):
        raise ItemFailed(f"{url[:300]} is not on the source's allowed hosts")
    target = httpx.URL(url)
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=TIMEOUT_SECONDS) as client:
        for _ in range(MAX_REDIRECTS + 1):
            if not allowed(str(target), source.allow_hosts):
                raise ItemFailed(f"{target} is not on the source's allowed hosts")
            try:
                address = await checked_address(target, internal)
            except AddressRefused as exc:
                raise ItemFailed(str(exc)) from None
            response = await client.send(
                pinned_request(client, "GET", target, address, {**_HEADERS, **headers}), stream=True
            )
            try:
                if response.status_code in (301, 302, 303, 307, 308) and "location" in response.headers:
                    target = target.join(response.headers["location"])
                    continue
                body = bytearray()
                if response.status_code != 304:
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > limit:
                            raise ItemFailed(f"{target} is larger than {limit} bytes")
                return _Answer(response.status_code, response.headers, bytes(body))
            finally:
                await response.aclose()
    raise ItemFailed(f"{url} redirects more than {MAX_REDIRECTS} times")


def sitemap_urls(xml: bytes) -> tuple[list[str], list[str]]:
    """(page URLs, nested sitemap URLs) of a sitemap or a sitemap index."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ItemFailed(f"the sitemap is not valid XML: {exc}") from None
    locs = [(el.text or "").strip() for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "loc"]
    nested = root.tag.rsplit("}", 1)[-1] == "sitemapindex"
    return ([], locs) if nested else (locs, [])


class WebConnector:
    web = True

    async def _sitemap(self, url: str, source: Source) -> tuple[list[str], list[str]]:
        try:
            response = await _get(url, source, {}, MAX_SITEMAP_BYTES)
        except httpx.HTTPError as exc:
            raise ItemFailed(f"the sitemap could not be fetched: {type(exc).__name__}") from None
        if response.status >= 400:
            raise ItemFailed(f"the sitemap could not be fetched: HTTP {response.status}")
        return sitemap_urls(response.body)

    async def list_items(self, source: Source) -> list[RemoteItem]:
        assert source.url is not None
        if source.kind == "url":
            return [RemoteItem(source.url)]
        pages, nested = await self._sitemap(source.url, source)
        for child in nested[:20]:
            if allowed(child, source.allow_hosts):
                pages.extend((await self._sitemap(child, source))[0])
        # A page off the allowed hosts is listed too: its fetch is refused before any connection, and the sync
        # counts it failed with the reason (a page silently missing from the collection helps nobody).
        seen = list(dict.fromkeys(page for page in pages if page))
        return [RemoteItem(page) for page in seen[:MAX_ITEMS]]

    async def fetch(self, source: Source, item: RemoteItem, known: Item | None) -> Fetched | None:
        headers: dict[str, str] = {}
        if known is not None and known.document_id is not None:
            if known.etag:
                headers["If-None-Match"] = known.etag
            if known.last_modified:
                headers["If-Modified-Since"] = known.last_modified
        try:
            response = await _get(item.key, source, headers, MAX_UPLOAD_BYTES)
        except httpx.HTTPError as exc:
            raise ItemFailed(f"{item.key} could not be fetched: {type(exc).__name__}") from None
        if response.status == 304:
            return None
        if response.status >= 400:
            raise ItemFailed(f"{item.key} could not be fetched: HTTP {response.status}")
        kind = response.headers.get("content-type", "text/html").split(";")[0].strip().lower()
        if kind not in _TYPES:
            raise ItemFailed(f"{item.key} is {kind}, not a page that can be read")
        path = httpx.URL(item.key).path.rstrip("/").rsplit("/", 1)[-1] or str(httpx.URL(item.key).host)
        return Fetched(
            response.body,
            _TYPES[kind],
            path[:200],
            response.headers.get("etag"),
            response.headers.get("last-modified"),
        )
