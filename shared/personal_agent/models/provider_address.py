"""Where an org's model provider may be called. Its `base_url` passes the same address checks as workflow outputs
(public internet only, cloud metadata never) unless the operator allow-lists the host (`PA_PROVIDER_ALLOW_HOSTS`;
the host of `PA_OPENAI_COMPATIBLE_BASE_URL` is the operator's own and always allowed). It is checked when the
provider is saved and again whenever a model is built, and the model's HTTP client connects to the checked address
only, with no redirects: a DNS answer that changes afterwards cannot move a request, or the key it carries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from personal_agent.errors import InvalidInput
from personal_agent.net.public_address import AddressRefused, IPAddress, checked_address, parse_allow_hosts
from personal_agent.settings import get_settings

if TYPE_CHECKING:  # httpx2 is the model SDKs' client, loaded only where a model is built
    import httpx2

TIMEOUT_SECONDS = 600.0  # a long answer streams for minutes; the connect timeout is what catches a dead host
CONNECT_SECONDS = 5.0


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


def pinned_client(base_url: str, address: IPAddress) -> httpx2.AsyncClient:
    """An HTTP client for the model SDK that reaches `base_url`'s origin at `address` only, never redirected."""
    import httpx2

    class PinnedTransport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            origin = httpx2.URL(base_url)
            self.origin = (origin.scheme, origin.host, origin.port or _default_port(origin.scheme))
            # No kept-alive connections: nothing outlives the request, so a client nobody closes leaks no socket.
            limits = httpx2.Limits(max_keepalive_connections=0)
            self.inner = httpx2.AsyncHTTPTransport(trust_env=False, limits=limits)

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
