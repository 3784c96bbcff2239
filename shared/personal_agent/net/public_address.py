"""Which addresses a user-given URL may reach: public internet only (no loopback, private, link-local,
unique-local, shared, reserved, multicast or cloud metadata address) unless an admin allow-lists the host;
cloud metadata never. An IPv6 address that carries an IPv4 one (IPv4-mapped or -compatible, SIIT, NAT64, 6to4)
is judged by the IPv4 address it reaches. The caller connects to the address that was checked (`pinned_request`),
so a DNS answer that changes between the check and the connect (rebinding) cannot move the request."""

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

_LAST_32_BITS = (
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64, the well-known prefix (RFC 6052)
    ipaddress.ip_network("::ffff:0:0:0/96"),  # SIIT IPv4-translated (RFC 2765)
    ipaddress.ip_network("::/96"),  # IPv4-compatible (deprecated; `::` and `::1` are not IPv4)
)
_NOT_PUBLIC_V6 = (ipaddress.ip_network("64:ff9b:1::/48"),)
"""NAT64 local-use prefix (RFC 8215): where it carries the IPv4 address is the network's choice, so never public."""


class AddressRefused(ValueError):
    """The URL may not be reached from here (its message says why, for the person who gave it)."""


def parse_allow_hosts(value: str) -> frozenset[str]:
    """An allow-list setting (`host` / `host:port`, comma-separated) as a set of lower-case entries."""
    return frozenset(entry.strip().lower() for entry in value.split(",") if entry.strip())


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address reaches through a translation or tunnel (IPv4-mapped, IPv4-compatible,
    SIIT, NAT64 well-known prefix, 6to4), or None."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if int(address) <= 1:  # `::` and `::1` are themselves, not IPv4-compatible addresses
        return None
    if any(address in network for network in _LAST_32_BITS):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def unwrap(address: IPAddress) -> IPAddress:
    """The address a connection to `address` finally reaches (the IPv4 one it carries, else itself)."""
    return embedded_ipv4(address) or address


def is_metadata(address: IPAddress) -> bool:
    """A cloud metadata service's address, directly or inside an IPv6 one."""
    return address in METADATA_ADDRESSES or unwrap(address) in METADATA_ADDRESSES


def is_public(address: IPAddress) -> bool:
    """True for an address on the public internet; everything internal or special-purpose is False."""
    inner = embedded_ipv4(address)
    if inner is not None:
        return is_public(inner)
    if isinstance(address, ipaddress.IPv6Address) and any(address in network for network in _NOT_PUBLIC_V6):
        return False
    return address.is_global and not address.is_multicast and address not in METADATA_ADDRESSES


async def resolve(host: str, port: int) -> list[IPAddress]:
    try:  # an address written out is itself: no resolver thread (its hop costs ms on a busy loop)
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise AddressRefused(f"the host {host!r} could not be resolved") from None
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


async def checked_host(
    scheme: str, host: str | None, port: int | None, allow: frozenset[str], verb: str = "fetched"
) -> IPAddress:
    """The checked address a connection to `scheme://host:port` goes to; raises `AddressRefused` for what it may
    not reach (every address the name resolves to must pass; metadata never, allow-listed or not)."""
    if scheme not in ("http", "https"):
        raise AddressRefused(f"only http and https URLs can be {verb}")
    if not host:
        raise AddressRefused("the URL has no host")
    port = port or (443 if scheme == "https" else 80)
    host = host.lower()
    addresses = await resolve(host, port)
    if not addresses:
        raise AddressRefused(f"the host {host!r} could not be resolved")
    allowed = host in allow or f"{host}:{port}" in allow
    for address in addresses:
        if is_metadata(address) or not (allowed or is_public(address)):
            raise AddressRefused(f"{host} is not a public internet address; it cannot be {verb}")
    return addresses[0]


async def checked_address(url: httpx.URL, allow: frozenset[str], verb: str = "fetched") -> IPAddress:
    """The checked address a request to `url` connects to; raises `AddressRefused` for what it may not reach."""
    return await checked_host(url.scheme, url.host, url.port, allow, verb)


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
