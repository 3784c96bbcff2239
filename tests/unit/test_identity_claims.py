"""Claim paths for orgs and roles, as Keycloak, Cognito, Auth0 and a plain `org` claim lay them out."""

from __future__ import annotations

import pytest

from personal_agent.identity.claims import ClaimMapping, Grant, claim_values, normalize_org, read_grant


def test_plain_org_and_roles_claims() -> None:
    grant = read_grant({"org": "acme", "roles": ["org-admin", "billing"]}, ClaimMapping())
    assert grant == Grant(orgs=("acme",), roles=frozenset({"org-admin"}))


def test_a_configured_claim_the_token_lacks_grants_nothing() -> None:
    # IdPs drop empty claims (Cognito omits `cognito:groups`): absent means none, never "ask the database".
    assert read_grant({"sub": "x"}, ClaimMapping()) == Grant(orgs=(), roles=frozenset())
    assert read_grant({"org": [], "roles": []}, ClaimMapping()) == Grant(orgs=(), roles=frozenset())
    cognito = ClaimMapping("cognito:groups", "cognito:groups", org_prefix="org:", role_prefix="role:")
    assert read_grant({"sub": "x"}, cognito) == Grant(orgs=(), roles=frozenset())


def test_only_an_issuer_without_the_claim_leaves_it_to_stored_memberships() -> None:
    mapping = ClaimMapping(org_claim="", roles_claim=" , ")
    assert not mapping.carries_orgs and not mapping.carries_roles
    assert read_grant({"org": "acme", "roles": ["admin"]}, mapping) == Grant(orgs=None, roles=None)


def test_keycloak_realm_and_client_roles_are_merged() -> None:
    claims = {
        "realm_access": {"roles": ["offline_access", "user"]},
        "resource_access": {"personal-agent": {"roles": ["org-admin"]}, "other": {"roles": ["admin"]}},
        "organization": {"acme": {"id": "1"}, "globex": {"id": "2"}},
    }
    mapping = ClaimMapping("organization", "realm_access.roles,resource_access.personal-agent.roles")
    assert read_grant(claims, mapping) == Grant(orgs=("acme", "globex"), roles=frozenset({"user", "org-admin"}))


def test_cognito_groups_with_prefixes() -> None:
    claims = {"cognito:groups": ["org:acme", "role:admin", "everyone", "org:Globex"]}
    mapping = ClaimMapping("cognito:groups", "cognito:groups", org_prefix="org:", role_prefix="role:")
    assert read_grant(claims, mapping) == Grant(orgs=("acme", "globex"), roles=frozenset({"admin"}))


def test_auth0_namespaced_claims_are_matched_whole() -> None:
    claims = {"https://pa.example.com/org": "acme", "https://pa.example.com/roles": ["user"]}
    mapping = ClaimMapping("https://pa.example.com/org", "https://pa.example.com/roles")
    assert read_grant(claims, mapping) == Grant(orgs=("acme",), roles=frozenset({"user"}))


def test_space_separated_strings_and_junk_values() -> None:
    assert claim_values({"scope": "a b,c"}, "scope") == ["a", "b", "c"]
    assert claim_values({"org": 42}, "org") == []
    assert claim_values({"a": {"b": 1}}, "a.b.c") is None


@pytest.mark.parametrize(
    ("raw", "slug"), [("acme", "acme"), ("/Acme", "acme"), (" team-1 ", "team-1"), ("a b", None), ("-x", None)]
)
def test_org_values_become_slugs_or_nothing(raw: str, slug: str | None) -> None:
    assert normalize_org(raw) == slug
