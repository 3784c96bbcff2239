"""Which addresses a user-given URL may reach: public internet only (no loopback, private, link-local,
unique-local, shared, reserved, multicast or cloud metadata address) unless an admin allow-lists the host;
cloud metadata never. The caller connects to the address that was checked (`pinned_request`), so a DNS answer
that changes between the check and the connect (rebinding) cannot move the request."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # httpx is imported by the callers that send (kept off the API function's cold start)
    import httpx

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200", "169.254.170.2")
)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressRefused(ValueError):
    """The URL may not be reached from here (its message says why, for the person who gave it)."""


def parse_allow_hosts(value: str) -> frozenset[str]:
    """An allow-list setting (`host` / `host:port`, comma-separated) as a set of lower-case entries."""
    return frozenset(entry.strip().lower() for entry in value.split(",") if entry.strip())


def is_public(address: IPAddress) -> bool:
    """True for an address on the public internet; everything internal or special-purpose is False."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return is_public(address.ipv4_mapped)
    return address.is_global and not address.is_multicast and address not in METADATA_ADDRESSES


async def resolve(host: str, port: int) -> list[IPAddress]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise AddressRefused(f"the host {host!r} could not be resolved") from None
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


async def checked_address(url: httpx.URL, allow: frozenset[str], verb: str = "fetched") -> IPAddress:
    """The checked address a request to `url` connects to; raises `AddressRefused` for what it may not reach."""
    if url.scheme not in ("http", "https"):
        raise AddressRefused(f"only http and https URLs can be {verb}")
    if not url.host:
        raise AddressRefused("the URL has no host")
    port = url.port or (443 if url.scheme == "https" else 80)
    host = url.host.lower()
    addresses = await resolve(host, port)
    if not addresses:
        raise AddressRefused(f"the host {host!r} could not be resolved")
    allowed = host in allow or f"{host}:{port}" in allow
    for address in addresses:
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        if address in METADATA_ADDRESSES or mapped in METADATA_ADDRESSES or not (allowed or is_public(address)):
            raise AddressRefused(f"{host} is not a public internet address; it cannot be {verb}")
    return addresses[0]


def pinned_request(
    client: httpx.AsyncClient,
    method: str,
    url: httpx.URL,
    address: IPAddress,
    headers: dict[str, str],
    content: bytes | None = None,
) -> httpx.Request:
    """A request to the checked `address`, with the URL's host kept in the `Host` header and the TLS SNI."""
    target = url.copy_with(host=str(address))
    extensions: dict[str, Any] = {"sni_hostname": url.host} if url.scheme == "https" else {}
    host_header = url.netloc.decode("ascii")
    return client.build_request(
        method, target, headers={**headers, "Host": host_header}, content=content, extensions=extensions
    )
