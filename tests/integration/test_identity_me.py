"""`/api/v1/me` and the dev issuer: a dev token signs in the fixture's user, in its org, with its roles."""

from __future__ import annotations

from typing import Any

from tests.auth import auth_headers


async def test_me_is_the_tenant_user(client: Any, make_tenant: Any) -> None:
    tenant = make_tenant()
    response = await client.get("/api/v1/me", headers=auth_headers(tenant))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["user_id"] == str(tenant.user_id)
    assert body["org"] == {"id": str(tenant.org_id), "slug": tenant.slug}
    assert body["roles"] == ["user"] and body["via"] == "oidc"


async def test_no_token_is_401_missing_token(client: Any) -> None:
    response = await client.get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["code"] == "missing_token"
