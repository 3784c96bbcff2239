"""`web_fetch` and `web_search`: the web, read with SSRF guards and size and time limits.

`fetch_text` resolves the host itself, refuses any address that is not public (loopback, private, link-local,
unique-local, shared, reserved, multicast, cloud metadata), and connects to the address it checked (the URL's
host stays in the `Host` header and the TLS SNI), so a DNS answer that changes between check and connect
(rebinding) cannot move the request. Redirects are followed by hand, each one checked the same way. An admin
allow-list (`PA_WEB_FETCH_ALLOW_HOSTS`) lets named internal hosts through; cloud metadata never.

No extraction library is installed and the lock file stays as it is, so HTML is reduced to text with the
standard library's `html.parser` (scripts, styles and page chrome dropped, blocks kept as lines).
"""

from __future__ import annotations

import asyncio
import re
from html.parser import HTMLParser

import httpx
from pydantic_ai import ModelRetry

from personal_agent.net.public_address import (
    METADATA_ADDRESSES,
    AddressRefused,
    IPAddress,
    checked_address,
    is_public,
    parse_allow_hosts,
    pinned_request,
)

MAX_URL_CHARS = 2_000
MAX_BYTES = 1_000_000
MAX_CHARS = 20_000
MAX_REDIRECTS = 5
TIMEOUT_SECONDS = 10.0
_REDIRECTS = {301, 302, 303, 307, 308}
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml", "application/rss+xml")
_HEADERS = {"User-Agent": "PersonalAgent-web_fetch/1", "Accept": "text/html,text/plain;q=0.9,*/*;q=0.5"}
# The address checks live in `net.public_address` (workflow outputs use them too); re-exported for callers here.
__all__ = ["METADATA_ADDRESSES", "fetch_text", "html_to_text", "is_public", "parse_allow_hosts", "search"]


async def _pinned_address(url: httpx.URL, allow: frozenset[str]) -> IPAddress:
    """The checked address the request to `url` connects to; refuses what the URL may not reach."""
    try:
        return await checked_address(url, allow)
    except AddressRefused as exc:
        raise ModelRetry(str(exc)) from None


def _pinned_request(client: httpx.AsyncClient, url: httpx.URL, address: IPAddress) -> httpx.Request:
    return pinned_request(client, "GET", url, address, _HEADERS)


class _TextExtractor(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "nav", "footer", "iframe", "form"})
    _BLOCK = frozenset(
        {"p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "section", "article"}
        | {"header", "main", "blockquote", "pre", "hr", "dd", "dt"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skipping = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self._SKIP:
            self._skipping = max(0, self._skipping - 1)
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skipping:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Readable text of an HTML page: its title, then its body's text, one block per line."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in "".join(parser.parts).split("\n"))
    body = "\n".join(line for line in lines if line)
    title = " ".join(parser.title.split())
    return f"# {title}\n\n{body}" if title else body


async def _read_capped(response: httpx.Response) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BYTES:
            return b"".join(chunks)[:MAX_BYTES], True
    return b"".join(chunks), False


async def _fetch(url: httpx.URL, allow: frozenset[str]) -> str:
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=TIMEOUT_SECONDS) as client:
        for _ in range(MAX_REDIRECTS + 1):
            request = _pinned_request(client, url, await _pinned_address(url, allow))
            response = await client.send(request, stream=True)
            try:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    url = url.join(response.headers["location"])
                    continue
                if response.status_code >= 400:
                    return f"The page could not be fetched: HTTP {response.status_code}."
                kind = response.headers.get("content-type", "text/html").split(";")[0].strip().lower()
                if not kind.startswith(_TEXT_TYPES):
                    return f"The page is not text ({kind}); it was not read."
                body, truncated = await _read_capped(response)
                text = body.decode(response.encoding or "utf-8", errors="replace")
            finally:
                await response.aclose()
            text = html_to_text(text) if "html" in kind else text.strip()
            if truncated or len(text) > MAX_CHARS:
                text = text[:MAX_CHARS] + "\n\n[truncated]"
            return text
    raise ModelRetry(f"the URL redirects more than {MAX_REDIRECTS} times")


async def fetch_text(url: str, allow_hosts: frozenset[str] = frozenset()) -> str:
    """GET `url` and return its readable text (at most `MAX_CHARS`), or say why it could not be read."""
    if len(url) > MAX_URL_CHARS:
        raise ModelRetry(f"the URL is longer than {MAX_URL_CHARS} characters")
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL:
        raise ModelRetry("the URL is not valid") from None
    try:
        async with asyncio.timeout(TIMEOUT_SECONDS):
            return await _fetch(parsed, allow_hosts)
    except TimeoutError:
        return f"The page could not be fetched: no complete answer within {TIMEOUT_SECONDS:g} seconds."
    except httpx.HTTPError as exc:
        return f"The page could not be fetched: {type(exc).__name__}."


async def search(endpoint: str, query: str, limit: int = 8) -> str:
    """Results of a SearXNG-compatible JSON search (`q`, `format=json`) as a short numbered list."""
    query = query.strip()
    if not query or len(query) > 400:
        raise ModelRetry("the query must be 1 to 400 characters")
    try:
        async with httpx.AsyncClient(trust_env=False, timeout=TIMEOUT_SECONDS) as client:
            response = await client.get(endpoint, params={"q": query, "format": "json"})
            response.raise_for_status()
            results = response.json().get("results", [])
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return f"The search failed: {type(exc).__name__}."
    lines = []
    for number, item in enumerate(results[:limit], start=1):
        if isinstance(item, dict):
            title, link, snippet = (str(item.get(k) or "")[:500] for k in ("title", "url", "content"))
            lines.append(f"{number}. {title}\n   {link}\n   {snippet}".rstrip())
    return "\n".join(lines)[:MAX_CHARS] if lines else "No results."
