"""Where verification keys come from: a JWKS over HTTP (cached, rate-limited refetch) or in-process.

The verifier asks a `JwksSource` for the current key set and, when a token names a `kid` it does
not know, asks once more with `refresh=True`. The HTTP source honours that at most once per
`min_refresh_seconds`, so a flood of made-up `kid`s cannot hammer the identity provider, while a
real key rotation is picked up on the first token signed with the new key.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from personal_agent.errors import ServiceUnavailable

log = logging.getLogger("personal_agent.identity")

# Parameters that make a JWK private; a published set must never contain them.
PRIVATE_JWK_PARAMS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


@dataclass(frozen=True)
class JwkSet:
    """An issuer's public keys as JWK dicts (private parameters stripped)."""

    keys: tuple[Mapping[str, Any], ...]

    @classmethod
    def from_json(cls, document: Any) -> JwkSet:
        keys = document.get("keys") if isinstance(document, Mapping) else None
        if not isinstance(keys, list):
            raise ValueError("a JWKS document is an object with a `keys` list")
        usable = tuple(
            {k: v for k, v in key.items() if k not in PRIVATE_JWK_PARAMS}
            for key in keys
            if isinstance(key, Mapping) and isinstance(key.get("kty"), str)
        )
        return cls(usable)

    def as_json(self) -> dict[str, Any]:
        return {"keys": [dict(k) for k in self.keys]}


class JwksSource(Protocol):
    """Anything that can hand the verifier an issuer's current public keys."""

    async def get(self, *, refresh: bool = False) -> JwkSet: ...


class StaticJwksSource:
    """Keys provided in-process (the dev issuer, tests); `loader` is re-read on refresh."""

    def __init__(self, loader: Callable[[], JwkSet]) -> None:
        self._loader = loader
        self._current: JwkSet | None = None

    async def get(self, *, refresh: bool = False) -> JwkSet:
        if self._current is None or refresh:
            self._current = self._loader()
        return self._current


class HttpJwksSource:
    """An issuer's JWKS fetched over HTTPS, cached for `cache_seconds`, refetched on unknown `kid`.

    With no `url`, the JWKS location comes from the issuer's OIDC discovery document. When a
    fetch fails and an older key set is cached, the older set keeps serving (logged).
    """

    def __init__(
        self,
        issuer: str,
        url: str | None = None,
        *,
        cache_seconds: float = 600.0,
        min_refresh_seconds: float = 30.0,
        timeout_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self.url = url
        self.cache_seconds = cache_seconds
        self.min_refresh_seconds = min_refresh_seconds
        self.timeout_seconds = timeout_seconds
        self.clock = clock
        self.fetches = 0
        self._current: JwkSet | None = None
        self._fetched_at = float("-inf")
        self._attempted_at = float("-inf")
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    def _fresh_enough(self, refresh: bool) -> bool:
        now = self.clock()
        if refresh:
            # An unknown kid may refetch, but not more often than min_refresh_seconds.
            return now - self._attempted_at < self.min_refresh_seconds
        if self._current is None:
            return False
        # Past its cache time a key set is refetched, but a failing provider is retried at the refresh pace.
        return now - self._fetched_at < self.cache_seconds or now - self._attempted_at < self.min_refresh_seconds

    async def get(self, *, refresh: bool = False) -> JwkSet:
        if self._fresh_enough(refresh) and self._current is not None:
            return self._current
        async with self._lock():
            # Another request may have fetched while this one waited for the lock.
            if self._fresh_enough(refresh) and self._current is not None:
                return self._current
            if self._current is None and self.clock() - self._attempted_at < self.min_refresh_seconds:
                raise ServiceUnavailable("the identity provider's keys are unavailable", code="jwks_unavailable")
            self._attempted_at = self.clock()
            try:
                fetched = await self._fetch()
            except Exception as exc:
                if self._current is not None:
                    log.warning("JWKS refetch failed, keeping the cached keys: %s", exc)
                    return self._current
                log.error("JWKS fetch failed for %s: %s", self.issuer, exc)
                raise ServiceUnavailable(
                    "the identity provider's keys are unavailable", code="jwks_unavailable"
                ) from None
            self._current, self._fetched_at = fetched, self.clock()
            return fetched

    async def _fetch(self) -> JwkSet:
        import httpx

        async with httpx.AsyncClient(timeout=self.timeout_seconds, follow_redirects=False) as http:
            if self.url is None:
                discovery = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
                response = await http.get(discovery)
                response.raise_for_status()
                jwks_uri = response.json().get("jwks_uri")
                if not isinstance(jwks_uri, str):
                    raise ValueError(f"{discovery} names no jwks_uri")
                self.url = jwks_uri
            response = await http.get(self.url, headers={"Accept": "application/json"})
            response.raise_for_status()
            self.fetches += 1
            return JwkSet.from_json(response.json())
