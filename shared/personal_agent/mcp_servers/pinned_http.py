"""The HTTP transport of one MCP connection: every request goes to the address the server's URL was checked at
(the URL's host stays in the `Host` header and the TLS SNI, so a DNS answer that changes after the check cannot
move the connection), a request for any other origin is refused (no redirect or link leads elsewhere), no proxy
from the environment is used, and a response body is cut off past `MAX_RESPONSE_BYTES`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

from personal_agent.mcp_servers.endpoint import CheckedUrl

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""More than any tool listing or result a run keeps (results are capped far lower); a server sending more is cut."""


class ResponseTooLarge(httpx2.ReadError):
    """The server sent more than `MAX_RESPONSE_BYTES` in one response."""


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._limit:
                raise ResponseTooLarge("the MCP server's response is too large")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class PinnedTransport(httpx2.AsyncBaseTransport):
    """Sends the requests of one MCP connection to its checked address, and nowhere else."""

    def __init__(self, checked: CheckedUrl, limit: int = MAX_RESPONSE_BYTES) -> None:
        self._checked = checked
        self._limit = limit
        self._inner = httpx2.AsyncHTTPTransport(trust_env=False)

    def _same_origin(self, url: httpx2.URL) -> bool:
        checked = self._checked
        port = url.port or (443 if url.scheme == "https" else 80)
        return (url.scheme, url.host, port) == (checked.url.scheme, checked.url.host, checked.port)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if not self._same_origin(request.url):
            raise httpx2.ConnectError("refused: a request outside the MCP server's origin", request=request)
        request.url = request.url.copy_with(host=str(self._checked.address))
        if request.url.scheme == "https":
            request.extensions = {**request.extensions, "sni_hostname": self._checked.url.host}
        response = await self._inner.handle_async_request(request)
        response.stream = _CappedStream(response.stream, self._limit)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
