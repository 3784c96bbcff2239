"""Where an org's model provider may be called. Its `base_url` passes the same address checks as workflow outputs
(public internet only, cloud metadata never) unless the operator allow-lists the host (`PA_PROVIDER_ALLOW_HOSTS`;
the host of `PA_OPENAI_COMPATIBLE_BASE_URL` is the operator's own and always allowed). It is checked when the
provider is saved and again whenever a model is built, and the model's HTTP client connects to the checked address
only, with no redirects: a DNS answer that changes afterwards cannot move a request, or the key it carries.

A run's model gets its client from `run_client`: one per event loop, base_url and checked address, kept with its
connections (a model request after the first needs no new TCP and TLS handshake), all sharing one TLS context
(loading the CA bundle costs ~20 ms idle, 150 ms on a busy machine: it was paid by every run before its model
request)."""

from __future__ import annotations

import asyncio
import functools
import weakref
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from personal_agent.errors import InvalidInput
from personal_agent.net.public_address import AddressRefused, IPAddress, checked_address, parse_allow_hosts
from personal_agent.settings import get_settings

if TYPE_CHECKING:  # httpx2 is the model SDKs' client, loaded only where a model is built
    import httpx2

TIMEOUT_SECONDS = 600.0  # a long answer streams for minutes; the connect timeout is what catches a dead host
CONNECT_SECONDS = 5.0
MAX_RUN_CLIENTS = 64  # per event loop: distinct provider addresses with a kept client
_run_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], httpx2.AsyncClient]] = (
    weakref.WeakKeyDictionary()
)


class ProviderAddressRefused(InvalidInput):
    """The provider's base_url may not be called from here (the message says why; it names no secret)."""

    code = "address_not_allowed"


def allow_hosts() -> frozenset[str]:
    """The operator's allow-list, with the operator's own OpenAI-compatible endpoint on it."""
    settings = get_settings()
    allow = set(parse_allow_hosts(settings.provider_allow_hosts))
    if settings.openai_compatible_base_url:
        parts = urlsplit(settings.openai_compatible_base_url)
        if parts.hostname:
            allow.add(parts.hostname.lower())
    return frozenset(allow)


async def check_base_url(base_url: str) -> IPAddress:
    """The address a provider at `base_url` is called at; `ProviderAddressRefused` (422) for one it may not reach."""
    import httpx

    try:
        url = httpx.URL(base_url.strip())
        return await checked_address(url, allow_hosts(), verb="called")
    except httpx.InvalidURL:
        raise ProviderAddressRefused("base_url is not a valid URL", field="base_url") from None
    except AddressRefused as exc:
        raise ProviderAddressRefused(f"base_url: {exc}", field="base_url") from None


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


@functools.cache
def _tls_context() -> Any:
    """The one TLS context of this process's provider clients (the SDKs' default: certifi's CA bundle)."""
    import httpx2

    return httpx2.create_ssl_context(trust_env=False)


def run_client(base_url: str, address: IPAddress) -> httpx2.AsyncClient:
    """The client a run's model calls `base_url` through at the checked `address`: kept per event loop, with its
    connections, and never closed by its users (an address that changes gets a client of its own)."""
    clients = _run_clients.setdefault(asyncio.get_running_loop(), {})
    key = (base_url, str(address))
    client = clients.get(key)
    if client is None or client.is_closed:
        if len(clients) >= MAX_RUN_CLIENTS:
            clients.pop(next(iter(clients)))  # the oldest: its idle connections close when it is collected
        client = clients[key] = pinned_client(base_url, address, keep_alive=True)
    return client


def pinned_client(base_url: str, address: IPAddress, *, keep_alive: bool = False) -> httpx2.AsyncClient:
    """An HTTP client for the model SDK that reaches `base_url`'s origin at `address` only, never redirected.
    Without `keep_alive` nothing outlives a request, so a client nobody closes leaks no socket."""
    import httpx2

    class PinnedTransport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            origin = httpx2.URL(base_url)
            self.origin = (origin.scheme, origin.host, origin.port or _default_port(origin.scheme))
            limits = httpx2.Limits() if keep_alive else httpx2.Limits(max_keepalive_connections=0)
            self.inner = httpx2.AsyncHTTPTransport(trust_env=False, limits=limits, verify=_tls_context())

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            url = request.url
            if (url.scheme, url.host, url.port or _default_port(url.scheme)) != self.origin:
                raise httpx2.ConnectError("only the provider's checked address is called", request=request)
            request.url = url.copy_with(host=str(address))  # the Host header keeps the name
            if url.scheme == "https":
                request.extensions = {**request.extensions, "sni_hostname": url.host}
            return await self.inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    timeout = httpx2.Timeout(TIMEOUT_SECONDS, connect=CONNECT_SECONDS)
    options: dict[str, Any] = {"follow_redirects": False, "trust_env": False, "timeout": timeout}
    return httpx2.AsyncClient(transport=PinnedTransport(), **options)
