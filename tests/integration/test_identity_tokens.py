"""Personal access tokens: shown once, stored hashed, bound to one org, refused once revoked or expired."""

from __future__ import annotations

import hashlib
from typing import Any

import psycopg

from tests import db_state
from tests.auth import auth_headers, bearer


async def _create(client: Any, headers: dict[str, str], **body: Any) -> Any:
    response = await client.post("/api/v1/me/tokens", json={"name": "ci", **body}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


async def test_a_token_is_shown_once_stored_hashed_and_signs_in(client: Any, make_tenant: Any, admin_url: str) -> None:
    tenant = make_tenant(roles=("org-admin",))
    created = await _create(client, auth_headers(tenant, roles=("org-admin",)), expires_in_days=30)
    secret = created["token"]
    assert secret.startswith("pa_pat_") and len(secret) > 40
    assert created["org"] == tenant.slug and created["roles"] == ["org-admin"] and created["expires_at"]

    me = (await client.get("/api/v1/me", headers=bearer(secret))).json()
    assert (me["user_id"], me["org"]["slug"], me["via"], me["roles"]) == (
        str(tenant.user_id),
        tenant.slug,
        "pat",
        ["org-admin"],
    )

    listed = (await client.get("/api/v1/me/tokens", headers=auth_headers(tenant))).json()["items"]
    assert [t["id"] for t in listed] == [created["id"]]
    assert "token" not in listed[0] and secret not in str(listed)
    assert listed[0]["last_used_at"] is not None

    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT * FROM api_tokens WHERE id = %s", [created["id"]]).fetchone()
    assert row is not None
    assert hashlib.sha256(secret.encode()).hexdigest() in row
    assert secret not in [v for v in row if isinstance(v, str)]


async def test_a_revoked_token_is_refused_on_the_next_request(client: Any, make_tenant: Any) -> None:
    tenant = make_tenant()
    created = await _create(client, auth_headers(tenant))
    assert (await client.get("/api/v1/me", headers=bearer(created["token"]))).status_code == 200
    revoked = await client.delete(f"/api/v1/me/tokens/{created['id']}", headers=auth_headers(tenant))
    assert revoked.status_code == 204
    refused = await client.get("/api/v1/me", headers=bearer(created["token"]))
    assert (refused.status_code, refused.json()["code"]) == (401, "token_revoked")
    listed = (await client.get("/api/v1/me/tokens", headers=auth_headers(tenant))).json()["items"]
    assert listed[0]["revoked_at"] is not None


async def test_an_expired_token_is_refused_on_the_next_request(client: Any, make_tenant: Any, admin_url: str) -> None:
    tenant = make_tenant()
    created = await _create(client, auth_headers(tenant), expires_in_days=1)
    assert (await client.get("/api/v1/me", headers=bearer(created["token"]))).status_code == 200
    db_state.expire_token(admin_url, created["id"])  # a day passes
    refused = await client.get("/api/v1/me", headers=bearer(created["token"]))
    assert (refused.status_code, refused.json()["code"]) == (401, "token_expired")


async def test_unknown_and_foreign_org_tokens(client: Any, make_tenant: Any) -> None:
    tenant, other = make_tenant(), make_tenant()
    unknown = await client.get("/api/v1/me", headers=bearer("pa_pat_" + "x" * 43))
    assert (unknown.status_code, unknown.json()["code"]) == (401, "unknown_token")
    secret = (await _create(client, auth_headers(tenant)))["token"]
    foreign = await client.get("/api/v1/me", headers={**bearer(secret), "X-Org": other.slug})
    assert (foreign.status_code, foreign.json()["code"]) == (403, "org_not_granted")
    same = await client.get("/api/v1/me", headers={**bearer(secret), "X-Org": tenant.slug})
    assert same.status_code == 200 and same.json()["orgs"] == [tenant.slug]


async def test_a_token_never_holds_more_than_its_owner(client: Any, make_tenant: Any) -> None:
    tenant = make_tenant()
    response = await client.post(
        "/api/v1/me/tokens", json={"name": "x", "roles": ["admin"]}, headers=auth_headers(tenant)
    )
    assert (response.status_code, response.json()["code"]) == (403, "role_not_held")
    # Demoting the owner demotes their tokens from the next request on.
    admin_token = (await _create(client, auth_headers(tenant, roles=("org-admin",))))["token"]
    members = await client.get("/api/v1/org/members", headers=bearer(admin_token))
    assert members.status_code == 200
    await client.get("/api/v1/me", headers=auth_headers(tenant, roles=("user",)))  # the IdP now says `user`
    demoted = await client.get("/api/v1/org/members", headers=bearer(admin_token))
    assert (demoted.status_code, demoted.json()["code"]) == (403, "role_required")


async def test_a_token_cannot_mint_tokens(client: Any, make_tenant: Any) -> None:
    tenant = make_tenant()
    secret = (await _create(client, auth_headers(tenant)))["token"]
    response = await client.post("/api/v1/me/tokens", json={"name": "again"}, headers=bearer(secret))
    assert (response.status_code, response.json()["code"]) == (403, "pat_cannot_create_tokens")


async def test_bad_token_requests_are_4xx(client: Any, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    for body in ({"name": ""}, {"name": "x", "expires_at": "2001-01-01T00:00:00Z"}, {"name": "x", "roles": ["root"]}):
        response = await client.post("/api/v1/me/tokens", json=body, headers=headers)
        assert (response.status_code, response.json()["code"]) == (422, "invalid_input"), body
    missing = await client.delete("/api/v1/me/tokens/00000000-0000-0000-0000-000000000000", headers=headers)
    assert (missing.status_code, missing.json()["code"]) == (404, "token_not_found")
