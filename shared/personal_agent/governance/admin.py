"""Admin operations on an org's providers, models and routing settings (called by the admin API)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import Conflict, InvalidInput, NotFound
from personal_agent.governance import org_settings_store, provider_model_store, provider_store


async def get_settings_row(org_id: UUID) -> dict[str, Any]:
    async with org_transaction(org_id) as conn:
        row = await org_settings_store.get(conn, org_id)
    defaults = {"tier_floor": 0, "confidence_threshold": 0.8, "routing_model": None, "default_model": None}
    return row or {**defaults, "output_email_domains": [], "code_execution": None, "trace_content": False}


async def put_settings(org_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """Replace the settings sent; `output_email_domains`, `code_execution`, `trace_content` left out keep the org's."""
    async with org_transaction(org_id) as conn:
        return await org_settings_store.put(conn, org_id, values)


async def list_providers(org_id: UUID) -> list[dict[str, Any]]:
    async with org_transaction(org_id) as conn:
        providers = await provider_store.list_all(conn)
        models = await provider_model_store.list_all(conn)
    for provider in providers:
        provider["models"] = [m for m in models if m["provider_id"] == provider["id"]]
    return providers


async def create_provider(org_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    if values["kind"] == "openai-compatible" and not values.get("base_url"):
        raise InvalidInput("an OpenAI-compatible provider needs base_url", code="base_url_required")
    from psycopg.errors import UniqueViolation

    try:
        async with org_transaction(org_id) as conn:
            if values.get("key_id") is not None:
                cur = await conn.execute("SELECT 1 FROM provider_keys WHERE id = %s", [values["key_id"]])
                if await cur.fetchone() is None:
                    raise NotFound("key not found", code="key_not_found")
            row = await provider_store.insert(conn, org_id, values)
    except UniqueViolation as exc:
        raise Conflict(f"a provider named {values['name']!r} exists", code="provider_exists") from exc
    row["models"] = []
    return row


async def delete_provider(org_id: UUID, provider_id: UUID) -> None:
    async with org_transaction(org_id) as conn:
        if not await provider_store.delete(conn, provider_id):
            raise NotFound("provider not found", code="provider_not_found")


async def add_model(org_id: UUID, provider_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    from psycopg.errors import UniqueViolation

    try:
        async with org_transaction(org_id) as conn:
            if not await provider_store.exists(conn, provider_id):
                raise NotFound("provider not found", code="provider_not_found")
            return await provider_model_store.insert(conn, org_id, provider_id, values)
    except UniqueViolation as exc:
        raise Conflict(f"model {values['name']!r} exists for this provider", code="model_exists") from exc


async def delete_model(org_id: UUID, provider_id: UUID, model_id: UUID) -> None:
    async with org_transaction(org_id) as conn:
        if not await provider_model_store.delete(conn, provider_id, model_id):
            raise NotFound("model not found", code="model_not_found")


async def update_model(org_id: UUID, provider_id: UUID, model_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """Change what is given of a model (enabled, tags, quality, prices; a null price goes back to genai-prices)."""
    cleared = [k for k in ("enabled", "tags", "quality") if k in values and values[k] is None]
    if cleared:  # a price or window of null means "the default"; these have no default to go back to
        raise InvalidInput(f"{', '.join(cleared)} cannot be null", code="null_not_allowed")
    sets = {k: (list(v) if k == "tags" else v) for k, v in values.items() if k in provider_model_store.CHANGEABLE}
    async with org_transaction(org_id) as conn:
        row = await provider_model_store.update(conn, provider_id, model_id, sets)  # nothing sent: 404 first, then 422
    if row is None:
        raise NotFound("model not found", code="model_not_found")
    if not sets:
        raise InvalidInput("nothing to change", code="empty_update")
    return row
