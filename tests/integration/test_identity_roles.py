"""Roles per route, the dev issuer's login and JWKS, and that none of the dev parts exist in AWS mode."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from personal_agent.settings import get_settings
from tests.auth import auth_headers, bearer, dev_issuer


async def test_a_user_calling_an_admin_route_gets_403(client: Any, make_tenant: Any) -> None:
    tenant = make_tenant()
    response = await client.get("/api/v1/org/members", headers=auth_headers(tenant, roles=("user",)))
    assert (response.status_code, response.json()["code"]) == (403, "role_required")


async def test_org_admins_list_their_own_members_only(client: Any, make_tenant: Any) -> None:
    tenant, other = make_tenant(roles=("org-admin",)), make_tenant()
    for roles in (("org-admin",), ("admin",)):
        response = await client.get("/api/v1/org/members", headers=auth_headers(tenant, roles=roles))
        assert response.status_code == 200, response.text
        members = response.json()["items"]
        assert [m["user_id"] for m in members] == [str(tenant.user_id)]
        assert str(other.user_id) not in response.text


async def test_dev_login_returns_a_token_the_api_accepts(client: Any) -> None:
    response = await client.post("/api/v1/dev/login", json={"org": "acme-dev", "user": "alice", "role": "org-admin"})
    assert response.status_code == 200, response.text
    login = response.json()
    assert login["token_type"] == "Bearer" and login["roles"] == ["org-admin"] and login["org"] == "acme-dev"
    me = (await client.get("/api/v1/me", headers=bearer(login["access_token"]))).json()
    assert me["subject"] == "alice" and me["org"]["slug"] == "acme-dev"
    bad = await client.post("/api/v1/dev/login", json={"org": "Not A Slug", "user": "alice"})
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_input")


async def test_the_dev_jwks_is_public_and_verifies_dev_tokens(client: Any) -> None:
    jwks = (await client.get("/.well-known/jwks.json")).json()
    assert jwks["keys"] and all("d" not in key for key in jwks["keys"])
    issuer = dev_issuer()
    new_kid = issuer.rotate()
    rotated = (await client.get("/.well-known/jwks.json")).json()
    assert new_kid in [k["kid"] for k in rotated["keys"]] and len(rotated["keys"]) == len(jwks["keys"]) + 1
    # A token signed with the new key verifies: the unknown kid makes the dev key set be re-read.
    token = issuer.mint(subject="bob", orgs=["acme-rotated"])
    assert json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "==")).get("kid") == new_kid
    assert (await client.get("/api/v1/me", headers=bearer(token))).status_code == 200


@pytest.fixture(params=["PA_ENV=aws", "inside Lambda with PA_ENV left at local"])
def aws_mode(stack: object, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    if request.param == "PA_ENV=aws":
        monkeypatch.setenv("PA_ENV", "aws")
    else:
        monkeypatch.setenv("PA_ENV", "local")
        monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "pa-api")
    monkeypatch.delenv("PA_OIDC_ISSUER", raising=False)
    get_settings.cache_clear()
    try:
        yield
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()


async def test_no_dev_issuer_in_aws_mode(aws_mode: None) -> None:
    from personal_agent.api.app import create_app

    token = dev_issuer().mint(subject="mallory", orgs=["acme"], roles=["admin"])
    app = create_app()
    paths = {getattr(route, "path", "") for route in app.routes}
    assert "/api/v1/dev/login" not in paths and "/.well-known/jwks.json" not in paths
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        login = await http.post("/api/v1/dev/login", json={"org": "acme", "user": "mallory", "role": "admin"})
        assert login.status_code in (404, 405)
        assert (await http.get("/.well-known/jwks.json")).status_code == 404
        refused = await http.get("/api/v1/me", headers=bearer(token))
        assert (refused.status_code, refused.json()["code"]) == (401, "wrong_issuer")


async def test_pa_token_prints_a_token_the_api_accepts(client: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from personal_agent.cli import main

    assert main(["token", "--org", "acme-cli", "--user", "alice", "--role", "admin"]) == 0
    token = capsys.readouterr().out.strip()
    me = (await client.get("/api/v1/me", headers=bearer(token))).json()
    assert (me["subject"], me["org"]["slug"], me["roles"]) == ("alice", "acme-cli", ["admin"])
    assert main(["token", "--org", "acme", "--user", "alice", "--role", "root"]) == 2


async def test_the_dev_servers_jwks_verifies_dev_tokens_over_http(live_url: str) -> None:
    """What a real deployment does with an IdP, done against the dev server's well-known JWKS."""
    from personal_agent.identity.dev_issuer import DEV_CLAIMS
    from personal_agent.identity.jwks import HttpJwksSource
    from personal_agent.identity.oidc import Issuer, TokenVerifier

    issuer = dev_issuer()
    source = HttpJwksSource(issuer.issuer, f"{live_url}/.well-known/jwks.json")
    verifier = TokenVerifier([Issuer(issuer.issuer, issuer.audience, source, DEV_CLAIMS)])
    verified = await verifier.verify(issuer.mint(subject="carol", orgs=["acme"]))
    assert verified.subject == "carol" and source.fetches == 1
