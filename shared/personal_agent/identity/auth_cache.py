"""A short-lived cache of the principal a verified OIDC token stands for, so a request pays one Redis GET instead
of the database round trips of the directory lookup (user, memberships, org, roles), and revocation-aware: every
change that takes access away bumps one counter in Redis (`revoked()`), and an entry filled before the bump is
never used again, by any process. An offboarding through the API therefore cuts a cached token on its very next
request; a change written to the database behind the API's back is seen within `auth_cache_seconds` (5 s by
default); with no bus at hand nothing is cached.

The token's expiry and claims are checked on every request, its signature once per process and key
(`identity.signature_cache`). Personal access tokens are not cached at all: their row is read on every use, so
their revocation and expiry stay exact.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Awaitable, Callable

from personal_agent.bus import get_bus
from personal_agent.bus.key_names import auth_epoch
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings

log = logging.getLogger(__name__)
MAX_ENTRIES = 10_000
_entries: dict[str, tuple[Principal, float, int]] = {}  # key -> (principal, fresh until (monotonic), epoch)
_warned: list[bool] = []


def _key(credential: str, x_org: str | None) -> str:
    return hashlib.sha256(f"{credential}\0{x_org or ''}".encode()).hexdigest()


async def _epoch() -> int | None:
    try:
        return await get_bus().counter(auth_epoch())
    except Exception as exc:  # no bus: look every credential up (correct, only slower)
        if not _warned:
            _warned.append(True)
            log.warning("auth cache off: the revocation counter is unreadable (%s)", type(exc).__name__)
        return None


async def cached_principal(
    credential: str, x_org: str | None, resolve: Callable[[], Awaitable[Principal]]
) -> Principal:
    """The principal `resolve()` returned for this credential and org header within `auth_cache_seconds`,
    unless access changed anywhere since; else `resolve()` (whose refusals are never cached)."""
    ttl = get_settings().auth_cache_seconds
    if ttl <= 0:
        return await resolve()
    epoch = await _epoch()
    if epoch is None:
        return await resolve()
    key = _key(credential, x_org)
    hit = _entries.get(key)
    now = time.monotonic()
    if hit is not None and hit[1] > now and hit[2] == epoch:
        return hit[0]
    principal = await resolve()
    if len(_entries) >= MAX_ENTRIES:
        _entries.clear()
    _entries[key] = (principal, now + ttl, epoch)
    return principal


async def revoked() -> None:
    """Call after (never before) committing a change that may take access away: every cached principal, in
    this process and every other, is looked up again on its next use."""
    _entries.clear()
    try:
        await get_bus().bump(auth_epoch())
    except Exception as exc:  # processes that cannot read the counter do not cache either
        log.warning("could not bump the revocation counter (%s)", type(exc).__name__)
