"""Offboarding: removing or disabling a member, or disabling a user, ends every access on the next request.

OIDC tokens and personal access tokens alike; a token whose IdP still names the org never re-creates a
removed membership; the org always keeps an admin; another org's members are 404.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg

from tests.auth import auth_headers, bearer, dev_issuer


async def _join(client: Any, orgs: list[str], roles: tuple[str, ...] = ("user",)) -> tuple[dict[str, str], str]:
    """A new user signs in with a token naming `orgs`: headers for that token, and the user's id."""
    headers = bearer(dev_issuer().mint(subject=f"member-{uuid.uuid4().hex[:8]}", orgs=orgs, roles=roles))
    me = await client.get("/api/v1/me", headers=headers)
    assert me.status_code == 200, me.text
    return headers, me.json()["user_id"]


async def _pat(client: Any, headers: dict[str, str]) -> dict[str, str]:
    created = await client.post("/api/v1/me/tokens", json={"name": "script"}, headers=headers)
    assert created.status_code == 201, created.text
    return bearer(created.json()["token"])


async def _refusal(client: Any, headers: dict[str, str], **extra: str) -> tuple[int, str]:
    response = await client.get("/api/v1/me", headers={**headers, **extra})
    return response.status_code, response.json().get("code", "")


def _members(admin_url: str, org_id: Any) -> dict[str, tuple[str, list[str]]]:
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute("SELECT user_id, status, roles FROM memberships WHERE org_id = %s", [org_id]).fetchall()
    return {str(user_id): (status, roles) for user_id, status, roles in rows}


async def test_removing_a_member_ends_oidc_and_pat_access_at_once(
    client: Any, make_tenant: Any, admin_url: str
) -> None:
    org = make_tenant(roles=("org-admin",))
    admin = auth_headers(org, roles=("org-admin",))
    member, member_id = await _join(client, [org.slug], roles=("org-admin",))
    pat = await _pat(client, member)
    assert (await _refusal(client, pat))[0] == 200

    removed = await client.delete(f"/api/v1/org/members/{member_id}", headers=admin)
    assert removed.status_code == 204, removed.text

    # The same, still valid OIDC token (its IdP still names the org) and the PAT: both refused at once.
    assert await _refusal(client, member) == (403, "not_a_member")
    assert await _refusal(client, pat) == (401, "token_revoked")
    chats = await client.get("/api/v1/chats", headers=member)
    assert (chats.status_code, chats.json()["code"]) == (403, "not_a_member")
    # Not re-created by those attempts: still a tombstone, roles reset to `user`.
    assert _members(admin_url, org.org_id)[member_id] == ("removed", ["user"])
    listed = (await client.get("/api/v1/org/members", headers=admin)).json()["items"]
    assert member_id not in [m["user_id"] for m in listed]
    everyone = (await client.get("/api/v1/org/members?include_removed=true", headers=admin)).json()["items"]
    assert {m["user_id"]: m["status"] for m in everyone}[member_id] == "removed"
    again = await client.delete(f"/api/v1/org/members/{member_id}", headers=admin)
    assert (again.status_code, again.json()["code"]) == (404, "member_not_found")


async def test_a_removed_member_keeps_their_other_orgs(client: Any, make_tenant: Any) -> None:
    first, second = make_tenant(roles=("org-admin",)), make_tenant()
    member, member_id = await _join(client, [first.slug, second.slug])
    assert (
        await client.delete(f"/api/v1/org/members/{member_id}", headers=auth_headers(first, ("org-admin",)))
    ).status_code == 204
    me = (await client.get("/api/v1/me", headers=member)).json()
    assert (me["org"]["slug"], me["orgs"]) == (second.slug, [second.slug])
    assert await _refusal(client, member, **{"X-Org": first.slug}) == (403, "not_a_member")


async def test_disabling_a_member_suspends_every_credential_until_enabled(
    client: Any, make_tenant: Any, admin_url: str
) -> None:
    org = make_tenant(roles=("org-admin",))
    admin = auth_headers(org, roles=("org-admin",))
    member, member_id = await _join(client, [org.slug], roles=("org-admin",))
    pat = await _pat(client, member)

    disabled = await client.post(f"/api/v1/org/members/{member_id}/disable", headers=admin)
    assert disabled.status_code == 200, disabled.text
    assert disabled.json()["status"] == "disabled" and disabled.json()["status_changed_at"]
    assert await _refusal(client, member) == (403, "membership_disabled")
    assert await _refusal(client, pat) == (403, "membership_disabled")
    assert _members(admin_url, org.org_id)[member_id] == ("disabled", ["org-admin"])

    enabled = await client.post(f"/api/v1/org/members/{member_id}/enable", headers=admin)
    assert enabled.status_code == 200 and enabled.json()["status"] == "active"
    assert await _refusal(client, member) == (200, "")
    assert await _refusal(client, pat) == (200, "")


async def test_enable_readmits_a_removed_member_as_a_user(client: Any, make_tenant: Any) -> None:
    org = make_tenant(roles=("org-admin",))
    admin = auth_headers(org, roles=("org-admin",))
    member, member_id = await _join(client, [org.slug])
    assert (await client.delete(f"/api/v1/org/members/{member_id}", headers=admin)).status_code == 204
    readmitted = await client.post(f"/api/v1/org/members/{member_id}/enable", headers=admin)
    assert readmitted.status_code == 200 and readmitted.json()["status"] == "active"
    assert (await client.get("/api/v1/me", headers=member)).json()["org"]["slug"] == org.slug


async def test_offboarding_anyone_outside_the_org_is_404(client: Any, make_tenant: Any, admin_url: str) -> None:
    org, other = make_tenant(roles=("org-admin",)), make_tenant()
    admin = auth_headers(org, roles=("org-admin",))
    for user_id in (str(uuid.uuid4()), str(other.user_id)):
        for method, path in (
            ("DELETE", f"/api/v1/org/members/{user_id}"),
            ("POST", f"/api/v1/org/members/{user_id}/disable"),
            ("POST", f"/api/v1/org/members/{user_id}/enable"),
        ):
            response = await client.request(method, path, headers=admin)
            assert (response.status_code, response.json()["code"]) == (404, "member_not_found"), path
            assert other.slug not in response.text
    assert _members(admin_url, other.org_id)[str(other.user_id)][0] == "active"
    assert (await _refusal(client, auth_headers(other)))[0] == 200
    member, member_id = await _join(client, [org.slug])
    not_admin = await client.delete(f"/api/v1/org/members/{member_id}", headers=member)
    assert (not_admin.status_code, not_admin.json()["code"]) == (403, "role_required")


async def test_admins_cannot_offboard_themselves_and_one_always_remains(client: Any, make_tenant: Any) -> None:
    org = make_tenant(roles=("org-admin",))
    alice = auth_headers(org, roles=("org-admin",))
    for path in (f"/api/v1/org/members/{org.user_id}", f"/api/v1/org/members/{org.user_id}/disable"):
        response = await client.request("DELETE" if path.endswith(str(org.user_id)) else "POST", path, headers=alice)
        assert (response.status_code, response.json()["code"]) == (409, "cannot_offboard_self")
    bob, bob_id = await _join(client, [org.slug], roles=("org-admin",))
    # The only two admins remove each other at the same moment: exactly one of them wins.
    results = await asyncio.gather(
        client.delete(f"/api/v1/org/members/{bob_id}", headers=alice),
        client.delete(f"/api/v1/org/members/{org.user_id}", headers=bob),
    )
    outcomes = sorted((r.status_code, r.json()["code"] if r.content else "") for r in results)
    assert outcomes == [(204, ""), (403, "not_a_member")]
    winner = alice if results[0].status_code == 204 else bob
    members = (await client.get("/api/v1/org/members", headers=winner)).json()["items"]
    assert [(m["roles"], m["status"]) for m in members] == [(["org-admin"], "active")]


async def test_only_a_platform_admin_offboards_a_platform_admin(client: Any, make_tenant: Any) -> None:
    org = make_tenant(roles=("org-admin",))
    platform, platform_id = await _join(client, [org.slug], roles=("admin",))
    refused = await client.post(
        f"/api/v1/org/members/{platform_id}/disable", headers=auth_headers(org, roles=("org-admin",))
    )
    assert (refused.status_code, refused.json()["code"]) == (403, "role_required")
    _, other_admin_id = await _join(client, [org.slug], roles=("admin",))
    assert (await client.post(f"/api/v1/org/members/{other_admin_id}/disable", headers=platform)).status_code == 200


async def test_a_platform_admin_disables_a_user_in_every_org(client: Any, make_tenant: Any) -> None:
    first, second = make_tenant(roles=("org-admin",)), make_tenant()
    member, member_id = await _join(client, [first.slug, second.slug])
    pat = await _pat(client, member)
    platform, platform_id = await _join(client, [f"ops-{uuid.uuid4().hex[:8]}"], roles=("admin",))

    org_admin = await client.post(
        f"/api/v1/platform/users/{member_id}/disable", headers=auth_headers(first, ("org-admin",))
    )
    assert (org_admin.status_code, org_admin.json()["code"]) == (403, "role_required")
    disabled = await client.post(f"/api/v1/platform/users/{member_id}/disable", headers=platform)
    assert disabled.status_code == 200 and disabled.json()["disabled_at"], disabled.text
    for slug in (first.slug, second.slug):
        assert await _refusal(client, member, **{"X-Org": slug}) == (403, "user_disabled")
    assert await _refusal(client, pat) == (403, "user_disabled")
    listed = (await client.get("/api/v1/org/members", headers=auth_headers(first, ("org-admin",)))).json()["items"]
    assert {m["user_id"]: m["user_disabled"] for m in listed}[member_id] is True

    enabled = await client.post(f"/api/v1/platform/users/{member_id}/enable", headers=platform)
    assert enabled.status_code == 200 and enabled.json()["disabled_at"] is None
    assert await _refusal(client, pat) == (200, "")
    unknown = await client.post(f"/api/v1/platform/users/{uuid.uuid4()}/disable", headers=platform)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "user_not_found")
    itself = await client.post(f"/api/v1/platform/users/{platform_id}/disable", headers=platform)
    assert (itself.status_code, itself.json()["code"]) == (409, "cannot_offboard_self")
