"""The token verifier with in-process keys and a fixed clock: the checks that need no network or database."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import pytest

from personal_agent.errors import Unauthorized
from personal_agent.identity.jwks import JwkSet, StaticJwksSource
from personal_agent.identity.oidc import Issuer, TokenVerifier

ISS = "https://idp.example.test/realms/pa"
NOW = 1_700_000_000


def _key(alg: str, kid: str) -> Any:
    from joserfc.jwk import ECKey, RSAKey

    params = {"kid": kid, "use": "sig", "alg": alg}
    if alg == "RS256":
        return RSAKey.generate_key(2048, parameters=params, private=True)
    return ECKey.generate_key("P-256", parameters=params, private=True)


@pytest.fixture(scope="module")
def keys() -> dict[str, Any]:
    return {"rsa": _key("RS256", "rsa-1"), "ec": _key("ES256", "ec-1")}


def _verifier(*published: Any, leeway: int = 60) -> TokenVerifier:
    jwks = JwkSet.from_json({"keys": [k.as_dict(private=False) for k in published]})
    source = StaticJwksSource(lambda: jwks)
    return TokenVerifier([Issuer(ISS, "pa", source, leeway_seconds=leeway)], clock=lambda: NOW)


def _sign(key: Any, header: dict[str, Any] | None = None, **claims: Any) -> str:
    from joserfc import jwt

    alg = key.as_dict()["alg"]
    body = {"iss": ISS, "aud": "pa", "sub": "alice", "iat": NOW, "exp": NOW + 300, **claims}
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode({"alg": alg, "kid": key.kid, **(header or {})}, body, key, algorithms=[alg])


async def _code(verifier: TokenVerifier, token: str) -> str:
    with pytest.raises(Unauthorized) as refused:
        await verifier.verify(token)
    return refused.value.code


async def test_both_allowed_algorithms_verify(keys: dict[str, Any]) -> None:
    verifier = _verifier(keys["rsa"], keys["ec"])
    for key in keys.values():
        assert (await verifier.verify(_sign(key))).subject == "alice"


async def test_expiry_and_not_before_honour_the_leeway(keys: dict[str, Any]) -> None:
    verifier = _verifier(keys["ec"], leeway=60)
    assert (await verifier.verify(_sign(keys["ec"], exp=NOW - 60))).subject == "alice"
    assert await _code(verifier, _sign(keys["ec"], exp=NOW - 61)) == "token_expired"
    assert (await verifier.verify(_sign(keys["ec"], nbf=NOW + 60))).subject == "alice"
    assert await _code(verifier, _sign(keys["ec"], nbf=NOW + 61)) == "token_not_yet_valid"
    assert await _code(verifier, _sign(keys["ec"], iat=NOW + 61)) == "token_not_yet_valid"
    assert await _code(verifier, _sign(keys["ec"], exp="soon")) == "invalid_claims"


async def test_audience_may_be_a_list(keys: dict[str, Any]) -> None:
    verifier = _verifier(keys["ec"])
    assert (await verifier.verify(_sign(keys["ec"], aud=["account", "pa"]))).subject == "alice"
    assert await _code(verifier, _sign(keys["ec"], aud=["account"])) == "wrong_audience"
    assert await _code(verifier, _sign(keys["ec"], aud=None)) == "wrong_audience"


async def test_subject_is_required(keys: dict[str, Any]) -> None:
    assert await _code(_verifier(keys["ec"]), _sign(keys["ec"], sub=None)) == "invalid_claims"


async def test_a_key_is_only_used_with_its_own_algorithm(keys: dict[str, Any]) -> None:
    from joserfc import jwt
    from joserfc.jwk import RSAKey

    # An RS384 token, even from a published RSA key, is outside the allow-list.
    verifier = _verifier(keys["rsa"])
    rsa = RSAKey.import_key({k: v for k, v in keys["rsa"].as_dict(private=True).items() if k != "alg"})
    claims = {"iss": ISS, "aud": "pa", "sub": "a", "exp": NOW + 9}
    rs384 = jwt.encode({"alg": "RS384", "kid": "rsa-1"}, claims, rsa, algorithms=["RS384"])
    assert await _code(verifier, rs384) == "unsupported_algorithm"
    # An ES256 header naming the RSA key's kid finds no EC key with that kid.
    forged = _sign(keys["ec"], header={"kid": "rsa-1"})
    assert await _code(_verifier(keys["rsa"], keys["ec"]), forged) == "unknown_kid"


async def test_a_token_without_kid_needs_an_unambiguous_key(keys: dict[str, Any]) -> None:
    from joserfc import jwt

    claims = {"iss": ISS, "aud": "pa", "sub": "alice", "exp": NOW + 300}
    token = jwt.encode({"alg": "ES256"}, claims, keys["ec"], algorithms=["ES256"])
    assert (await _verifier(keys["ec"], keys["rsa"]).verify(token)).subject == "alice"
    second = _key("ES256", "ec-2")
    assert await _code(_verifier(keys["ec"], second), token) == "unknown_kid"


async def test_critical_headers_and_encrypted_tokens_are_refused(keys: dict[str, Any]) -> None:
    verifier = _verifier(keys["ec"])
    _, body, signature = _sign(keys["ec"]).split(".")
    crit = base64.urlsafe_b64encode(b'{"alg":"ES256","kid":"ec-1","crit":["x-pa"],"x-pa":1}').rstrip(b"=").decode()
    assert await _code(verifier, f"{crit}.{body}.{signature}") == "unsupported_header"
    assert await _code(verifier, "a.b.c.d.e") == "malformed_token"
    assert await _code(verifier, "x" * 20_000) == "malformed_token"


def test_the_clock_default_is_wall_time() -> None:
    assert abs(TokenVerifier([]).clock() - time.time()) < 5


def _forge(header: dict[str, Any], claims: dict[str, Any]) -> str:
    """A token with any header and claims and a junk signature (checks that run before the signature)."""

    def seg(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{seg(header)}.{seg(claims)}.c2ln"


async def test_odd_claim_types_are_401_not_500(keys: dict[str, Any]) -> None:
    verifier = _verifier(keys["ec"])
    claims = {"iss": ISS, "aud": "pa", "sub": "alice", "exp": NOW + 300}
    assert await _code(verifier, _forge({"alg": "ES256", "kid": "ec-1"}, {**claims, "iss": [ISS]})) == "wrong_issuer"
    assert await _code(verifier, _forge({"alg": "ES256", "kid": 7}, claims)) == "malformed_token"
    assert await _code(verifier, _forge({"alg": "ES256", "kid": "ec-1"}, claims)) == "bad_signature"
    assert await _code(verifier, _forge(["not", "an", "object"], claims)) == "malformed_token"  # type: ignore[arg-type]


async def test_a_token_verified_before_is_still_refused_once_it_expires(keys: dict[str, Any]) -> None:
    """Its signature is checked once per key; its expiry on every use."""
    now = [NOW]
    jwks = JwkSet.from_json({"keys": [keys["ec"].as_dict(private=False)]})
    verifier = TokenVerifier(
        [Issuer(ISS, "pa", StaticJwksSource(lambda: jwks), leeway_seconds=0)], clock=lambda: now[0]
    )
    token = _sign(keys["ec"], exp=NOW + 10)
    assert (await verifier.verify(token)).subject == "alice"
    assert (await verifier.verify(token)).subject == "alice"
    now[0] = NOW + 11
    assert await _code(verifier, token) == "token_expired"


async def test_a_token_verified_before_is_refused_once_its_key_is_rotated_out(keys: dict[str, Any]) -> None:
    token = _sign(keys["ec"])
    assert (await _verifier(keys["ec"]).verify(token)).subject == "alice"
    rotated = _verifier(_key("ES256", keys["ec"].kid))  # the issuer now publishes another key under that kid
    assert await _code(rotated, token) == "bad_signature"


async def test_a_token_altered_after_verification_is_refused(keys: dict[str, Any]) -> None:
    verifier = _verifier(keys["ec"])
    token = _sign(keys["ec"])
    verified = await verifier.verify(token)
    header, _, signature = token.split(".")
    forged = _forge(json.loads(base64.urlsafe_b64decode(header + "==")), {**verified.claims, "sub": "mallory"})
    assert await _code(verifier, f"{forged.rsplit('.', 1)[0]}.{signature}") == "bad_signature"
