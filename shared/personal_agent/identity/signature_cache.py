"""The claims of a token whose signature this process has already verified with the same key.

A signature check (a key import and an ES256/RS256 verification, ~0.2 ms) gives the same answer for the same
token bytes and the same key every time, so a token's claims are kept after its first verification, keyed by a
digest of the token, the exact key (its JWK, as the issuer publishes it now) and the algorithm. The key is chosen
from the issuer's current JWKS before the cache is asked, so a key that was rotated out matches nothing. Only
successes are kept; expiry and every other claim are still checked on every request by the caller.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

MAX_ENTRIES = 4_096
_claims: dict[bytes, dict[str, Any]] = {}


def _key(token: str, jwk: Mapping[str, Any], alg: str) -> bytes:
    digest = hashlib.sha256(token.encode())
    digest.update(b"\0" + alg.encode() + b"\0")
    digest.update(json.dumps(jwk, sort_keys=True, separators=(",", ":")).encode())
    return digest.digest()


def verified_claims(
    token: str, jwk: Mapping[str, Any], alg: str, verify: Callable[[str, Mapping[str, Any], str], dict[str, Any]]
) -> dict[str, Any]:
    """A copy of the claims `verify(token, jwk, alg)` returned (once per token and key); its refusals raise."""
    key = _key(token, jwk, alg)
    claims = _claims.get(key)
    if claims is None:
        claims = verify(token, jwk, alg)
        if len(_claims) >= MAX_ENTRIES:
            _claims.clear()
        _claims[key] = claims
    return dict(claims)
