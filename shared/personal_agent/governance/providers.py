"""Registering an org's model provider: its base_url passes the outbound address checks, and a BYOK key it names
is bound to its endpoint (refused if the key was entered for another one) before the row is written."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.governance import admin
from personal_agent.governance.keys import bind_key, endpoint_of
from personal_agent.models.provider_address import check_base_url


async def create_provider(org_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """422 `address_not_allowed` for a base_url it may not call, 409 `key_endpoint_mismatch` for a key bound to
    another endpoint, 404 `key_not_found`, 409 `provider_exists`."""
    base_url = values.get("base_url") or None
    if base_url is not None and values["kind"] != "bedrock":
        await check_base_url(base_url)
    if values.get("key_id") is not None:
        await bind_key(org_id, values["key_id"], endpoint_of(values["kind"], base_url))
    return await admin.create_provider(org_id, values)
