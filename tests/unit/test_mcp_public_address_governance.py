"""IPv6 addresses that carry an IPv4 one reach that IPv4 address, so they are judged by it (issue 28, item 11):
NAT64 (64:ff9b::/96), 6to4 (2002::/16), IPv4-compatible (::a.b.c.d), IPv4-mapped and SIIT addresses of loopback,
private or metadata addresses are refused, and those of public addresses pass."""

from __future__ import annotations

import ipaddress

import pytest

from personal_agent.net.public_address import AddressRefused, checked_host, embedded_ipv4, is_metadata, is_public

WRAPPED_INTERNAL = [
    ("64:ff9b::7f00:1", "127.0.0.1"),  # NAT64 of loopback
    ("64:ff9b::a00:1", "10.0.0.1"),  # NAT64 of the VPC
    ("2002:7f00:1::", "127.0.0.1"),  # 6to4 of loopback
    ("2002:c0a8:101::1", "192.168.1.1"),  # 6to4 of a private address
    ("::127.0.0.1", "127.0.0.1"),  # IPv4-compatible loopback
    ("::10.1.2.3", "10.1.2.3"),  # IPv4-compatible private
    ("::ffff:127.0.0.1", "127.0.0.1"),  # IPv4-mapped
    ("::ffff:0:a00:1", "10.0.0.1"),  # SIIT
]
WRAPPED_METADATA = ["64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "::169.254.169.254", "::ffff:169.254.169.254"]


@pytest.mark.parametrize(("wrapped", "inner"), WRAPPED_INTERNAL)
def test_an_ipv6_address_carrying_an_internal_ipv4_one_is_not_public(wrapped: str, inner: str) -> None:
    address = ipaddress.ip_address(wrapped)
    assert embedded_ipv4(address) == ipaddress.ip_address(inner)
    assert not is_public(address)


@pytest.mark.parametrize("wrapped", WRAPPED_METADATA)
def test_an_ipv6_address_carrying_a_metadata_address_is_metadata(wrapped: str) -> None:
    assert is_metadata(ipaddress.ip_address(wrapped))
    assert not is_public(ipaddress.ip_address(wrapped))


@pytest.mark.parametrize("wrapped", ["64:ff9b::808:808", "2002:808:808::", "::ffff:8.8.8.8"])
def test_an_ipv6_address_carrying_a_public_ipv4_one_is_public(wrapped: str) -> None:
    assert is_public(ipaddress.ip_address(wrapped))


def test_plain_addresses_keep_their_verdicts() -> None:
    assert is_public(ipaddress.ip_address("2606:4700:4700::1111")) and is_public(ipaddress.ip_address("1.1.1.1"))
    for internal in ("::1", "::", "fe80::1", "fc00::1", "127.0.0.1", "64:ff9b:1::808:808"):
        assert not is_public(ipaddress.ip_address(internal)), internal
    assert embedded_ipv4(ipaddress.ip_address("::1")) is None


@pytest.mark.parametrize("wrapped", [w for w, _ in WRAPPED_INTERNAL[:6]])
async def test_a_url_at_a_wrapped_internal_address_is_refused(wrapped: str) -> None:
    with pytest.raises(AddressRefused):
        await checked_host("http", wrapped, 80, frozenset())


async def test_a_wrapped_metadata_address_is_refused_even_when_allow_listed() -> None:
    for wrapped in WRAPPED_METADATA:
        with pytest.raises(AddressRefused):
            await checked_host("http", wrapped, 80, frozenset({wrapped, f"{wrapped}:80"}))
