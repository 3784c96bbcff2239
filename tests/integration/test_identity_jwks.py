"""The HTTP JWKS source against a real local endpoint: caching, rate-limited refetch, outages.

Time is a clock the test advances, never a sleep.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from personal_agent.errors import ServiceUnavailable, Unauthorized
from personal_agent.identity.jwks import HttpJwksSource
from personal_agent.identity.oidc import Issuer, TokenVerifier
from tests.auth import TestIdentityProvider


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def idp() -> Iterator[TestIdentityProvider]:
    provider = TestIdentityProvider()
    try:
        yield provider
    finally:
        provider.close()


def _source(idp: TestIdentityProvider, clock: Clock, url: str | None = None) -> HttpJwksSource:
    return HttpJwksSource(
        idp.issuer, url or idp.jwks_url, cache_seconds=600, min_refresh_seconds=30, clock=clock, timeout_seconds=5
    )


async def test_keys_are_cached_until_they_expire(idp: TestIdentityProvider) -> None:
    clock = Clock()
    kid = idp.new_key("ES256")
    source = _source(idp, clock)
    assert [k["kid"] for k in (await source.get()).keys] == [kid]
    clock.now += 599
    await source.get()
    assert idp.jwks_requests == 1
    clock.now += 2
    await source.get()
    assert idp.jwks_requests == 2


async def test_unknown_kids_refetch_at_most_once_per_interval(idp: TestIdentityProvider) -> None:
    clock = Clock()
    kid = idp.new_key("ES256")
    source = _source(idp, clock)
    verifier = TokenVerifier([Issuer(idp.issuer, "personal-agent", source)])
    assert (await verifier.verify(idp.sign(idp.claims("alice"), kid))).subject == "alice"
    assert idp.jwks_requests == 1

    clock.now += 31
    stray = idp.new_key("ES256", publish=False)
    for _ in range(5):  # a flood of tokens with a kid the provider does not publish
        with pytest.raises(Unauthorized) as refused:
            await verifier.verify(idp.sign(idp.claims("mallory"), stray, header={"kid": uuid.uuid4().hex}))
        assert refused.value.code == "unknown_kid"
    assert idp.jwks_requests == 2  # one refetch, then rate-limited

    # The provider rotates; right after the last refetch the new key waits for the interval to pass.
    rotated = idp.new_key("ES256")
    with pytest.raises(Unauthorized):
        await verifier.verify(idp.sign(idp.claims("alice"), rotated))
    clock.now += 30
    assert (await verifier.verify(idp.sign(idp.claims("alice"), rotated))).subject == "alice"
    assert idp.jwks_requests == 3


async def test_an_outage_keeps_the_cached_keys(idp: TestIdentityProvider) -> None:
    clock = Clock()
    kid = idp.new_key("RS256")
    source = _source(idp, clock)
    verifier = TokenVerifier([Issuer(idp.issuer, "personal-agent", source)])
    await verifier.verify(idp.sign(idp.claims("alice"), kid))
    idp.failing = True
    clock.now += 3600  # past the cache time: a refetch is attempted, fails, and the old keys keep serving
    assert (await verifier.verify(idp.sign(idp.claims("alice"), kid))).subject == "alice"


async def test_no_keys_at_all_is_503_not_401(idp: TestIdentityProvider) -> None:
    idp.failing = True
    source = _source(idp, Clock())
    with pytest.raises(ServiceUnavailable) as unavailable:
        await source.get()
    assert unavailable.value.code == "jwks_unavailable" and unavailable.value.status == 503


async def test_the_jwks_uri_is_discovered_from_the_issuer(idp: TestIdentityProvider) -> None:
    kid = idp.new_key("RS256")
    source = HttpJwksSource(idp.issuer)
    assert [k["kid"] for k in (await source.get()).keys] == [kid]
    assert source.url == idp.jwks_url
