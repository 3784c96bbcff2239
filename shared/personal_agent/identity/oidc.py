"""Bearer JWT verification: the one code path for every issuer (the dev issuer and real IdPs).

Order matters: the header's `alg` is checked against the allow-list before any key is touched
(so `none` and HS* never reach a verifier), the issuer is picked from the trusted list by the
unverified `iss` only to know whose keys to use, and every claim is checked after the signature.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from personal_agent.errors import Unauthorized
from personal_agent.identity.claims import ClaimMapping
from personal_agent.identity.jwks import JwkSet, JwksSource
from personal_agent.identity.signature_cache import verified_claims

# Algorithm -> the key type and curve it needs. Nothing else is ever accepted.
ALLOWED_ALGORITHMS: dict[str, tuple[str, str | None]] = {"RS256": ("RSA", None), "ES256": ("EC", "P-256")}
MAX_TOKEN_BYTES = 16_384


@dataclass(frozen=True)
class Issuer:
    """A trusted token issuer: its `iss`, the audience it must name, its keys and claim layout."""

    issuer: str
    audience: str
    jwks: JwksSource
    mapping: ClaimMapping = ClaimMapping()
    audience_claim: str = "aud"
    leeway_seconds: int = 60


@dataclass(frozen=True)
class VerifiedToken:
    """A token whose signature and registered claims passed; `claims` are safe to read."""

    issuer: Issuer
    subject: str
    claims: Mapping[str, Any]


def _reject(code: str, message: str) -> Unauthorized:
    return Unauthorized(message, code=code)


def _b64json(segment: str) -> Any:
    padded = segment + "=" * (-len(segment) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))


def unverified_parts(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and payload of a compact JWS, decoded but NOT verified."""
    if len(token) > MAX_TOKEN_BYTES:
        raise _reject("malformed_token", "the bearer token is too long")
    parts = token.split(".")
    if len(parts) != 3:
        raise _reject("malformed_token", "the bearer token is not a signed JWT")
    try:
        header, payload = _b64json(parts[0]), _b64json(parts[1])
    except (ValueError, UnicodeError, binascii.Error):
        raise _reject("malformed_token", "the bearer token cannot be decoded") from None
    if not isinstance(header, dict) or not isinstance(payload, dict):
        raise _reject("malformed_token", "the bearer token cannot be decoded")
    return header, payload


class TokenVerifier:
    """Verifies bearer JWTs from a fixed list of trusted issuers."""

    def __init__(self, issuers: Iterable[Issuer], *, clock: Callable[[], float] = time.time) -> None:
        self.issuers = {i.issuer: i for i in issuers}
        self.clock = clock

    async def verify(self, token: str) -> VerifiedToken:
        """The verified token, or `Unauthorized` with a stable code saying what was wrong."""
        header, unverified = unverified_parts(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in ALLOWED_ALGORITHMS:
            raise _reject("unsupported_algorithm", f"tokens must be signed with {' or '.join(ALLOWED_ALGORITHMS)}")
        if "crit" in header:
            raise _reject("unsupported_header", "tokens with critical header extensions are not accepted")
        iss = unverified.get("iss")
        issuer = self.issuers.get(iss) if isinstance(iss, str) else None
        if issuer is None:
            raise _reject("wrong_issuer", "the token's issuer is not trusted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise _reject("malformed_token", "the token's kid is not a string")
        keys = await issuer.jwks.get()
        key = _select_key(keys, kid, alg)
        if key is None:
            # Possibly a rotation: look once more (the source rate-limits real refetches).
            keys = await issuer.jwks.get(refresh=True)
            key = _select_key(keys, kid, alg)
        if key is None:
            raise _reject("unknown_kid", "the token was signed by a key the issuer does not publish")
        claims = verified_claims(token, key, alg, _verify_signature)
        return VerifiedToken(issuer=issuer, subject=self._check_claims(issuer, claims), claims=claims)

    def _check_claims(self, issuer: Issuer, claims: dict[str, Any]) -> str:
        if claims.get("iss") != issuer.issuer:
            raise _reject("wrong_issuer", "the token's issuer is not trusted")
        audience = claims.get(issuer.audience_claim)
        audiences = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
        if issuer.audience not in audiences:
            raise _reject("wrong_audience", "the token is not meant for this API")
        now, leeway = self.clock(), issuer.leeway_seconds
        exp, nbf, iat = (claims.get(name) for name in ("exp", "nbf", "iat"))
        for name, value in (("exp", exp), ("nbf", nbf), ("iat", iat)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
                raise _reject("invalid_claims", f"the token's {name} is not a number")
        if exp is None:
            raise _reject("invalid_claims", "the token has no expiry (exp)")
        if now > exp + leeway:
            raise _reject("token_expired", "the token has expired")
        if nbf is not None and now + leeway < nbf:
            raise _reject("token_not_yet_valid", "the token is not valid yet (nbf)")
        if iat is not None and now + leeway < iat:
            raise _reject("token_not_yet_valid", "the token was issued in the future (iat)")
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise _reject("invalid_claims", "the token has no subject (sub)")
        return subject


def _select_key(keys: JwkSet, kid: str | None, alg: str) -> Mapping[str, Any] | None:
    kty, crv = ALLOWED_ALGORITHMS[alg]
    candidates = [
        k
        for k in keys.keys
        if k.get("kty") == kty
        and (crv is None or k.get("crv") == crv)
        and k.get("use", "sig") == "sig"
        and k.get("alg", alg) == alg
    ]
    if kid is None:
        # Without a kid only an unambiguous key will do.
        return candidates[0] if len(candidates) == 1 else None
    return next((k for k in candidates if k.get("kid") == kid), None)


def _verify_signature(token: str, jwk: Mapping[str, Any], alg: str) -> dict[str, Any]:
    # joserfc (and the cryptography it loads) is imported on first verification, not at cold start.
    from joserfc import jwt
    from joserfc.errors import BadSignatureError, JoseError
    from joserfc.jwk import ECKey, RSAKey

    try:
        key = ECKey.import_key(dict(jwk)) if jwk["kty"] == "EC" else RSAKey.import_key(dict(jwk))
        decoded = jwt.decode(token, key, algorithms=[alg])
    except BadSignatureError:
        raise _reject("bad_signature", "the token's signature does not verify") from None
    except (JoseError, ValueError, KeyError, TypeError):  # includes a malformed key in the JWKS
        raise _reject("invalid_token", "the token cannot be verified") from None
    claims = decoded.claims
    if not isinstance(claims, dict):
        raise _reject("malformed_token", "the token's payload is not a JSON object")
    return claims
