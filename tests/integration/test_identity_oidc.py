"""OIDC bearer tokens from an identity provider whose JWKS a real local HTTP endpoint serves.

Each bad token gets a 401 with a stable code; key rotation works; claim paths are configurable.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from personal_agent.settings import get_settings
from tests.auth import TestIdentityProvider, bearer


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _segment(value: dict[str, Any]) -> str:
    return _b64(json.dumps(value).encode())


@pytest.fixture
def idp(stack: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestIdentityProvider]:
    """The app trusts a fresh test provider (PA_OIDC_ISSUER / PA_OIDC_JWKS_URL point at it)."""
    provider = TestIdentityProvider()
    monkeypatch.setenv("PA_OIDC_ISSUER", provider.issuer)
    monkeypatch.setenv("PA_OIDC_JWKS_URL", provider.jwks_url)
    # Rotation is checked here end to end; the refetch rate limit has its own test with a clock.
    monkeypatch.setenv("PA_OIDC_JWKS_MIN_REFRESH_SECONDS", "0")
    get_settings.cache_clear()
    try:
        yield provider
    finally:
        provider.close()
        monkeypatch.undo()
        get_settings.cache_clear()


def _org() -> str:
    return f"acme-{uuid.uuid4().hex[:8]}"


def _user() -> str:
    return f"sub-{uuid.uuid4().hex[:8]}"


async def _me(client: Any, token: str, **headers: str) -> Any:
    return await client.get("/api/v1/me", headers={**bearer(token), **headers})


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
async def test_a_valid_token_creates_the_user_and_org_on_first_use(
    client: Any, idp: TestIdentityProvider, admin_url: str, alg: str
) -> None:
    import psycopg

    kid = idp.new_key(alg)
    org, subject = _org(), _user()
    token = idp.sign(idp.claims(subject, org=org, roles=["org-admin"], email=f"{subject}@example.test"), kid)
    first = await _me(client, token)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["org"]["slug"] == org and body["roles"] == ["org-admin"] and body["subject"] == subject
    again = await _me(client, token)
    assert again.json()["user_id"] == body["user_id"]
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT issuer, email FROM users WHERE id = %s", [body["user_id"]]).fetchone()
        members = conn.execute(
            "SELECT roles FROM memberships m JOIN orgs o ON o.id = m.org_id WHERE o.slug = %s", [org]
        ).fetchall()
    assert row == (idp.issuer, f"{subject}@example.test")
    assert members == [(["org-admin"],)]


def _bad_tokens(idp: TestIdentityProvider) -> dict[str, tuple[str, str]]:
    """Each bad token and the code its 401 must carry."""
    kid = idp.new_key("RS256")
    stray = idp.new_key("ES256", publish=False)
    org, subject = _org(), _user()
    now = int(time.time())
    good = idp.claims(subject, org=org)
    valid = idp.sign(good, kid)
    head, _, sig = valid.split(".")
    tampered = f"{head}.{_segment({**good, 'roles': ['admin']})}.{sig}"
    public_pem = idp.keys[kid].as_pem(private=False)
    hs_head = _segment({"alg": "HS256", "kid": kid, "typ": "JWT"})
    hs_body = _segment(good)
    hs_sig = _b64(hmac.new(public_pem, f"{hs_head}.{hs_body}".encode(), hashlib.sha256).digest())
    return {
        "expired": (idp.sign({**good, "iat": now - 7200, "nbf": now - 7200, "exp": now - 3600}, kid), "token_expired"),
        "not_yet_valid": (idp.sign({**good, "nbf": now + 3600, "exp": now + 7200}, kid), "token_not_yet_valid"),
        "issued_in_future": (idp.sign({**good, "iat": now + 3600, "exp": now + 7200}, kid), "token_not_yet_valid"),
        "wrong_audience": (idp.sign({**good, "aud": "someone-else"}, kid), "wrong_audience"),
        "wrong_issuer": (idp.sign({**good, "iss": "https://evil.example"}, kid), "wrong_issuer"),
        "alg_none": (f"{_segment({'alg': 'none', 'typ': 'JWT'})}.{_segment(good)}.", "unsupported_algorithm"),
        "hs256_with_public_key": (f"{hs_head}.{hs_body}.{hs_sig}", "unsupported_algorithm"),
        "unknown_kid": (idp.sign(good, stray), "unknown_kid"),
        "tampered_payload": (tampered, "bad_signature"),
        "no_expiry": (idp.sign({k: v for k, v in good.items() if k != "exp"}, kid), "invalid_claims"),
        "not_a_jwt": ("not-a-jwt", "malformed_token"),
    }


async def test_each_bad_token_is_401_with_a_stable_code(client: Any, idp: TestIdentityProvider) -> None:
    cases = _bad_tokens(idp)
    results = {}
    for name, (token, _) in cases.items():
        response = await _me(client, token)
        results[name] = (response.status_code, response.json().get("code"))
    assert results == {name: (401, code) for name, (_, code) in cases.items()}


async def test_a_token_within_the_leeway_is_accepted(client: Any, idp: TestIdentityProvider) -> None:
    kid = idp.new_key("ES256")
    now = int(time.time())
    token = idp.sign(idp.claims(_user(), org=_org(), exp=now - 5, nbf=now + 5), kid)
    assert (await _me(client, token)).status_code == 200


async def test_key_rotation_is_picked_up_when_the_jwks_changes(client: Any, idp: TestIdentityProvider) -> None:
    old = idp.new_key("RS256")
    org, subject = _org(), _user()
    assert (await _me(client, idp.sign(idp.claims(subject, org=org), old))).status_code == 200
    fetches = idp.jwks_requests

    new = idp.new_key("RS256", publish=False)
    early = await _me(client, idp.sign(idp.claims(subject, org=org), new))
    assert (early.status_code, early.json()["code"]) == (401, "unknown_kid")

    idp.published = [new]  # the provider rotates: the new key is published, the old one retired
    response = await _me(client, idp.sign(idp.claims(subject, org=org), new))
    assert response.status_code == 200, response.text
    assert idp.jwks_requests > fetches
    # The new key set is cached: the next request fetches nothing.
    before = idp.jwks_requests
    assert (await _me(client, idp.sign(idp.claims(subject, org=org), new))).status_code == 200
    assert idp.jwks_requests == before


async def test_jwks_discovered_from_the_issuer_when_no_url_is_set(
    client: Any, idp: TestIdentityProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PA_OIDC_JWKS_URL")
    get_settings.cache_clear()
    kid = idp.new_key("ES256")
    assert (await _me(client, idp.sign(idp.claims(_user(), org=_org()), kid))).status_code == 200
    assert idp.jwks_requests == 1


async def test_x_org_must_be_granted_by_the_token(client: Any, idp: TestIdentityProvider, make_tenant: Any) -> None:
    kid = idp.new_key("RS256")
    first, second, subject = _org(), _org(), _user()
    other = make_tenant()  # exists, but this token does not grant it
    token = idp.sign(idp.claims(subject, org=[first, second]), kid)
    me = (await _me(client, token)).json()
    assert me["org"]["slug"] == first and me["orgs"] == [first, second]
    assert (await _me(client, token, **{"X-Org": second})).json()["org"]["slug"] == second
    refused = await _me(client, token, **{"X-Org": other.slug})
    assert (refused.status_code, refused.json()["code"]) == (403, "org_not_granted")


async def test_keycloak_role_paths(client: Any, idp: TestIdentityProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PA_OIDC_ORG_CLAIM", "organization")
    monkeypatch.setenv("PA_OIDC_ROLES_CLAIM", "realm_access.roles,resource_access.personal-agent.roles")
    get_settings.cache_clear()
    kid = idp.new_key("RS256")
    org = _org()
    claims = idp.claims(
        _user(),
        organization={org: {"id": "kc-org-1"}},
        realm_access={"roles": ["offline_access", "uma_authorization"]},
        resource_access={"personal-agent": {"roles": ["org-admin"]}, "account": {"roles": ["admin"]}},
    )
    body = (await _me(client, idp.sign(claims, kid))).json()
    assert body["org"]["slug"] == org and body["roles"] == ["org-admin"]


async def test_cognito_groups_and_client_id_audience(
    client: Any, idp: TestIdentityProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PA_OIDC_AUDIENCE", "3n4b5urk1ft4fl3mg5e62d9ado")
    monkeypatch.setenv("PA_OIDC_AUDIENCE_CLAIM", "client_id")
    monkeypatch.setenv("PA_OIDC_ORG_CLAIM", "cognito:groups")
    monkeypatch.setenv("PA_OIDC_ORG_PREFIX", "org:")
    monkeypatch.setenv("PA_OIDC_ROLES_CLAIM", "cognito:groups")
    monkeypatch.setenv("PA_OIDC_ROLE_PREFIX", "role:")
    get_settings.cache_clear()
    kid = idp.new_key("RS256")
    org = _org()
    claims = idp.claims(
        _user(), client_id="3n4b5urk1ft4fl3mg5e62d9ado", **{"cognito:groups": [f"org:{org}", "role:admin", "staff"]}
    )
    del claims["aud"]  # Cognito access tokens carry client_id, not aud
    body = (await _me(client, idp.sign(claims, kid))).json()
    assert body["org"]["slug"] == org and body["roles"] == ["admin"]


async def test_without_an_org_claim_a_token_grants_no_org_not_the_stored_ones(
    client: Any, idp: TestIdentityProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    kid = idp.new_key("ES256")
    subject, org = _user(), _org()
    first = await _me(client, idp.sign(idp.claims(subject, org=org, roles=["org-admin"]), kid))
    assert first.json()["roles"] == ["org-admin"]
    # Same user, a token without the org claim: the membership made above is not used (it may be stale).
    refused = await _me(client, idp.sign(idp.claims(subject), kid))
    assert (refused.status_code, refused.json()["code"]) == (403, "no_org")
    # With a default org the token acts there, and without a roles claim it holds `user` only.
    default = _org()
    monkeypatch.setenv("PA_OIDC_DEFAULT_ORG", default)
    get_settings.cache_clear()
    body = (await _me(client, idp.sign(idp.claims(subject), kid))).json()
    assert (body["org"]["slug"], body["orgs"], body["roles"]) == (default, [default], ["user"])
    assert (await _me(client, idp.sign(idp.claims(_user()), kid))).json()["org"]["slug"] == default


async def test_an_issuer_without_an_org_claim_uses_the_users_memberships(
    client: Any, idp: TestIdentityProvider, monkeypatch: pytest.MonkeyPatch, make_tenant: Any, admin_url: str
) -> None:
    import psycopg

    monkeypatch.setenv("PA_OIDC_ORG_CLAIM", "")
    monkeypatch.setenv("PA_OIDC_ROLES_CLAIM", "")
    get_settings.cache_clear()
    kid = idp.new_key("RS256")
    tenant = make_tenant(roles=("org-admin",))
    subject = _user()
    lonely = await _me(client, idp.sign(idp.claims(subject, org="ignored", roles=["admin"]), kid))
    assert (lonely.status_code, lonely.json()["code"]) == (403, "no_org")
    with psycopg.connect(admin_url, autocommit=True) as conn:  # an operator adds the user and the membership
        conn.execute(
            "WITH u AS (INSERT INTO users (issuer, subject) VALUES (%s, %s) RETURNING id)"
            " INSERT INTO memberships (org_id, user_id, roles) SELECT %s, id, ARRAY['org-admin'] FROM u",
            [idp.issuer, subject, tenant.org_id],
        )
    body = (await _me(client, idp.sign(idp.claims(subject, org="ignored", roles=["admin"]), kid))).json()
    assert (body["org"]["slug"], body["roles"]) == (tenant.slug, ["org-admin"])


async def test_cognito_user_in_no_group_loses_org_and_roles(
    client: Any, idp: TestIdentityProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cognito omits `cognito:groups` when the user is in no group: that must not mean "as before"."""
    for name, value in {
        "PA_OIDC_ORG_CLAIM": "cognito:groups",
        "PA_OIDC_ORG_PREFIX": "org:",
        "PA_OIDC_ROLES_CLAIM": "cognito:groups",
        "PA_OIDC_ROLE_PREFIX": "role:",
    }.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    kid = idp.new_key("RS256")
    subject, org = _user(), _org()
    grouped = idp.claims(subject, **{"cognito:groups": [f"org:{org}", "role:org-admin"]})
    assert (await _me(client, idp.sign(grouped, kid))).json()["roles"] == ["org-admin"]
    ungrouped = await _me(client, idp.sign(idp.claims(subject), kid))
    assert (ungrouped.status_code, ungrouped.json()["code"]) == (403, "no_org")
    # Still in the org's group but no longer in the role's: the stored org-admin is not kept.
    demoted = await _me(client, idp.sign(idp.claims(subject, **{"cognito:groups": [f"org:{org}"]}), kid))
    assert demoted.json()["roles"] == ["user"]


async def test_unknown_orgs_are_refused_when_auto_create_is_off(
    client: Any, idp: TestIdentityProvider, monkeypatch: pytest.MonkeyPatch, make_tenant: Any
) -> None:
    monkeypatch.setenv("PA_AUTO_CREATE_ORGS", "false")
    get_settings.cache_clear()
    kid = idp.new_key("RS256")
    refused = await _me(client, idp.sign(idp.claims(_user(), org=_org()), kid))
    assert (refused.status_code, refused.json()["code"]) == (403, "unknown_org")
    existing = make_tenant()
    assert (await _me(client, idp.sign(idp.claims(_user(), org=existing.slug), kid))).status_code == 200


async def test_malformed_authorization_headers(client: Any) -> None:
    for header in ("Basic dXNlcjpwYXNz", "Bearer", "Bearer   "):
        response = await client.get("/api/v1/me", headers={"Authorization": header})
        assert (response.status_code, response.json()["code"]) == (401, "invalid_authorization_header"), header
