"""Registering or changing an org's model provider: its base_url passes the outbound address checks, and a BYOK key
it names is bound to its endpoint (refused if the key was entered for another one) before the row is written."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput, NotFound
from personal_agent.governance import admin, provider_model_store, provider_store
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


async def update_provider(org_id: UUID, provider_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """Change what is given of a provider (enabled, base_url, key, trust tier, locality), with the checks of
    `create_provider`: a new base_url passes the address checks, and its key (the new one, or the one it keeps)
    is bound to the new endpoint, so a key entered for the old endpoint is refused (409 `key_endpoint_mismatch`)
    rather than carried to another host. 404 `provider_not_found`, 422 `empty_update` / `base_url_required`."""
    async with org_transaction(org_id) as conn:
        current = await provider_store.get(conn, provider_id)
    if current is None:  # 404 first: another org's provider is not there, whatever was sent
        raise NotFound("provider not found", code="provider_not_found")
    if not values:
        raise InvalidInput("nothing to change", code="empty_update")
    cleared = [k for k in ("enabled", "trust_tier", "locality") if k in values and values[k] is None]
    if cleared:  # base_url and key_id of null mean "the default endpoint" and "no key"; these have no default
        raise InvalidInput(f"{', '.join(cleared)} cannot be null", code="null_not_allowed")
    if "base_url" in values:
        values["base_url"] = (values["base_url"] or "").strip() or None
    base_url = values.get("base_url", current["base_url"])
    key_id = values.get("key_id", current["key_id"])
    endpoint_changed = "base_url" in values and base_url != current["base_url"]
    if current["kind"] == "openai-compatible" and not base_url:
        raise InvalidInput("an OpenAI-compatible provider needs base_url", code="base_url_required")
    calls_base_url = current["kind"] != "bedrock"  # Bedrock is called with AWS credentials: no base_url, no key
    if endpoint_changed and base_url is not None and calls_base_url:
        await check_base_url(base_url)
    if key_id is not None and calls_base_url and (endpoint_changed or key_id != current["key_id"]):
        await bind_key(org_id, key_id, endpoint_of(current["kind"], base_url))
    async with org_transaction(org_id) as conn:
        row = await provider_store.update(conn, provider_id, values)
        if row is None:
            raise NotFound("provider not found", code="provider_not_found")
        row["models"] = await provider_model_store.of_provider(conn, provider_id)
    return row
