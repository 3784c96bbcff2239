"""Where an MCP server may be: an http(s) URL that passes the outbound address checks (public internet only, or a
host on the operator's `PA_MCP_ALLOW_HOSTS`; cloud metadata never), checked when it is saved and again before
every connection; or, in local mode, one of the operator's exact `PA_MCP_STDIO_COMMANDS`. Also the URL's origin,
which a server's sealed auth headers are bound to."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from personal_agent.net.public_address import AddressRefused, IPAddress, checked_host, parse_allow_hosts
from personal_agent.settings import get_settings

if TYPE_CHECKING:  # httpx2 comes with the `mcp` SDK; imported where a URL is parsed
    import httpx2

URL_REFUSED = "mcp_url_refused"
STDIO_NOT_ALLOWED = "mcp_stdio_not_allowed"
STDIO_LOCAL_ONLY = "stdio_local_only"


class EndpointRefused(Exception):
    """The server may not be connected to from here; `code` is stable, the message says why (for the admin)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class CheckedUrl:
    """An http(s) URL and the address its host resolved to when it was checked (the connection goes there)."""

    url: httpx2.URL
    address: IPAddress

    @property
    def port(self) -> int:
        return self.url.port or (443 if self.url.scheme == "https" else 80)


def allow_hosts() -> frozenset[str]:
    return parse_allow_hosts(get_settings().mcp_allow_hosts)


def stdio_commands() -> frozenset[str]:
    """The operator's stdio command lines, exactly as configured (one per line)."""
    return frozenset(line.strip() for line in get_settings().mcp_stdio_commands.splitlines() if line.strip())


def parse_url(url: str) -> httpx2.URL:
    import httpx2

    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError, ValueError):
        raise EndpointRefused("the MCP server URL is not valid", URL_REFUSED) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise EndpointRefused("an MCP server URL is an http or https URL", URL_REFUSED)
    return parsed


async def check_url(url: str) -> CheckedUrl:
    """The URL and its checked address; raises `EndpointRefused` for a URL an MCP connection may not reach."""
    parsed = parse_url(url)
    try:
        address = await checked_host(parsed.scheme, parsed.host, parsed.port, allow_hosts(), verb="connected to")
    except AddressRefused as exc:
        raise EndpointRefused(str(exc), URL_REFUSED) from None
    return CheckedUrl(parsed, address)


def check_stdio(command: str) -> None:
    """A stdio server's command line must be one the operator configured, character for character."""
    if not get_settings().is_local:
        raise EndpointRefused("stdio MCP servers run only in local mode", STDIO_LOCAL_ONLY)
    if command.strip() not in stdio_commands():
        raise EndpointRefused(
            "a stdio MCP server must be one of the operator's PA_MCP_STDIO_COMMANDS, exactly", STDIO_NOT_ALLOWED
        )


async def check_endpoint(url: str, transport: str) -> None:
    """Raise `EndpointRefused` unless a server at `url` over `transport` may be connected to."""
    if transport == "stdio":
        check_stdio(url)
    else:
        await check_url(url)


def origin(url: str, transport: str = "http") -> str:
    """`scheme://host:port` of an http(s) URL (the port always spelled out), `stdio:` for a local command."""
    if transport == "stdio":
        return "stdio:"
    try:
        parsed = parse_url(url)
    except EndpointRefused:
        return f"invalid:{url}"  # a URL saved before the checks: equal to itself only
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    return f"{parsed.scheme}://{host}:{port}"


def allow_own_server(url: str) -> None:
    """Add the host:port of a server this process runs itself (`pa dev`'s demo server on loopback) to
    `PA_MCP_ALLOW_HOSTS`, for this process and the workers it starts with its environment."""
    parsed = parse_url(url)
    entry = f"{parsed.host}:{parsed.port or (443 if parsed.scheme == 'https' else 80)}"
    current = os.environ.get("PA_MCP_ALLOW_HOSTS", "")
    os.environ["PA_MCP_ALLOW_HOSTS"] = f"{current},{entry}" if current.strip() else entry
    get_settings.cache_clear()
