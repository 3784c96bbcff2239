"""Offboarding reaches what was already under way: a stream opened before the removal ends within a
heartbeat, and the removed member's workflows stop starting runs."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from personal_agent.settings import get_settings
from tests.auth import auth_headers, bearer, dev_issuer
from tests.workflows import sign


@pytest.fixture
def quick_heartbeat() -> Iterator[None]:
    settings = get_settings()
    original, settings.sse_heartbeat_seconds = settings.sse_heartbeat_seconds, 0.2
    try:
        yield
    finally:
        settings.sse_heartbeat_seconds = original


async def _member(http: httpx.AsyncClient, slug: str) -> tuple[dict[str, str], str]:
    headers = bearer(dev_issuer().mint(subject=f"member-{uuid.uuid4().hex[:8]}", orgs=[slug], roles=["user"]))
    me = await http.get("/api/v1/me", headers=headers)
    assert me.status_code == 200, me.text
    return headers, me.json()["user_id"]


async def test_an_open_feed_ends_with_access_revoked_after_removal(
    http: httpx.AsyncClient, make_tenant: Any, quick_heartbeat: None
) -> None:
    org = make_tenant(roles=("org-admin",))
    member, member_id = await _member(http, org.slug)
    frames = []
    async with http.stream("GET", "/api/v1/feed", headers=member) as feed:
        assert feed.status_code == 200
        removed = await http.delete(f"/api/v1/org/members/{member_id}", headers=auth_headers(org, roles=("org-admin",)))
        assert removed.status_code == 204
        async for line in feed.aiter_lines():  # the server closes the stream after telling why
            if line.startswith("data:"):
                frames.append(json.loads(line[5:]))
    assert frames and frames[-1]["name"] == "access_revoked" and frames[-1]["value"]["code"] == "not_a_member"
    again = await http.get("/api/v1/feed", headers=member)
    assert (again.status_code, again.json()["code"]) == (403, "not_a_member")


async def test_a_removed_members_workflow_no_longer_starts_runs(http: httpx.AsyncClient, make_tenant: Any) -> None:
    org = make_tenant(roles=("org-admin",))
    member, member_id = await _member(http, org.slug)
    workflow = (await http.post("/api/v1/workflows", json={"name": "ci"}, headers=member)).json()
    removed = await http.delete(f"/api/v1/org/members/{member_id}", headers=auth_headers(org, roles=("org-admin",)))
    assert removed.status_code == 204
    body = json.dumps({"build": 1})
    signed = sign(workflow["signing_secret"], body.encode())
    refused = await http.post(f"/api/v1/hooks/{workflow['id']}", content=body, headers=signed)
    assert (refused.status_code, refused.json()["code"]) == (403, "not_a_member")
    history = (
        await http.get(f"/api/v1/workflows/{workflow['id']}/runs", headers=auth_headers(org, roles=("org-admin",)))
    ).json()
    assert all(item.get("run_id") is None for item in history["items"])
