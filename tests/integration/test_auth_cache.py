"""The auth cache never outlives an access change: a member offboarded in another process (its database write
plus its bump of the revocation counter) is refused on the very next request here, although this process had
the member's principal cached a moment before; and an offboarding through the API cuts every cached token of
the member at once. (The cache's effect on speed is measured by `bench/throughput.py`, never here.)"""

from __future__ import annotations

import uuid
from typing import Any

from personal_agent.bus import get_bus
from personal_agent.bus.key_names import auth_epoch
from personal_agent.settings import get_settings
from tests import db_state
from tests.auth import auth_headers, bearer, dev_issuer


async def _member(client: Any, slug: str) -> tuple[dict[str, str], str]:
    headers = bearer(dev_issuer().mint(subject=f"cached-{uuid.uuid4().hex[:8]}", orgs=[slug], roles=("user",)))
    me = await client.get("/api/v1/me", headers=headers)
    assert me.status_code == 200, me.text
    return headers, me.json()["user_id"]


async def _status(client: Any, headers: dict[str, str]) -> tuple[int, str]:
    response = await client.get("/api/v1/me", headers=headers)
    return response.status_code, response.json().get("code", "")


async def test_an_offboarding_in_another_process_cuts_a_cached_token_on_the_next_request(
    client: Any, make_tenant: Any, admin_url: str
) -> None:
    assert get_settings().auth_cache_seconds > 0  # the cache is on, as it is by default
    org = make_tenant()
    member, member_id = await _member(client, org.slug)
    assert await _status(client, member) == (200, "")  # the principal is cached now

    # Another API process offboards the member: it commits, then bumps the shared revocation counter.
    db_state.set_membership_elsewhere(admin_url, org.org_id, member_id, "disabled")
    await get_bus().bump(auth_epoch())

    assert await _status(client, member) == (403, "membership_disabled")


async def test_offboarding_through_the_api_cuts_every_cached_token_of_the_member(client: Any, make_tenant: Any) -> None:
    org = make_tenant(roles=("org-admin",))
    admin = auth_headers(org, roles=("org-admin",))
    member, member_id = await _member(client, org.slug)
    # A second token of the same person (another tab, a refreshed token): cached separately.
    other = bearer(
        dev_issuer().mint(
            subject=(await client.get("/api/v1/me", headers=member)).json()["subject"],
            orgs=[org.slug],
            roles=("user",),
            ttl_seconds=600,
        )
    )
    assert await _status(client, other) == (200, "")

    disabled = await client.post(f"/api/v1/org/members/{member_id}/disable", headers=admin)
    assert disabled.status_code == 200, disabled.text

    assert await _status(client, member) == (403, "membership_disabled")
    assert await _status(client, other) == (403, "membership_disabled")
    # Enabled again: the same tokens work again (a refusal is never cached).
    enabled = await client.post(f"/api/v1/org/members/{member_id}/enable", headers=admin)
    assert enabled.status_code == 200, enabled.text
    assert await _status(client, member) == (200, "")
