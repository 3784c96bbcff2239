"""Admin operations on an org's providers, models and routing settings (called by the admin API)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import Conflict, InvalidInput, NotFound

PROVIDER_COLUMNS = "id, name, kind, base_url, trust_tier, locality, key_id, enabled, created_at"
MODEL_COLUMNS = "id, provider_id, name, tags, quality, input_price, output_price, context_window, enabled, created_at"


SETTINGS_COLUMNS = "tier_floor, confidence_threshold, routing_model, default_model, output_email_domains"


async def get_settings_row(org_id: UUID) -> dict[str, Any]:
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(f"SELECT {SETTINGS_COLUMNS} FROM org_settings WHERE org_id = %s", [org_id])
        row = await cur.fetchone()
    defaults = {"tier_floor": 0, "confidence_threshold": 0.8, "routing_model": None, "default_model": None}
    return row or {**defaults, "output_email_domains": []}


async def put_settings(org_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """Replace the settings sent; `output_email_domains` left out (None) keeps the org's list."""
    domains = values.get("output_email_domains")
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            "INSERT INTO org_settings (org_id, tier_floor, confidence_threshold, routing_model, default_model,"
            " output_email_domains) VALUES (%s, %s, %s, %s, %s, COALESCE(%s::text[], '{}'))"
            " ON CONFLICT (org_id) DO UPDATE SET tier_floor = EXCLUDED.tier_floor,"
            " confidence_threshold = EXCLUDED.confidence_threshold, routing_model = EXCLUDED.routing_model,"
            " default_model = EXCLUDED.default_model,"
            " output_email_domains = COALESCE(%s::text[], org_settings.output_email_domains), updated_at = now()"
            f" RETURNING {SETTINGS_COLUMNS}",
            [
                org_id,
                values["tier_floor"],
                values["confidence_threshold"],
                values.get("routing_model"),
                values.get("default_model"),
                domains,
                domains,
            ],
        )
        row = await cur.fetchone()
    assert row is not None
    return row


async def list_providers(org_id: UUID) -> list[dict[str, Any]]:
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(f"SELECT {PROVIDER_COLUMNS} FROM providers ORDER BY name")
        providers = await cur.fetchall()
        cur = await conn.execute(f"SELECT {MODEL_COLUMNS} FROM provider_models ORDER BY name")
        models = await cur.fetchall()
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
            cur = await conn.execute(
                "INSERT INTO providers (org_id, name, kind, base_url, trust_tier, locality, key_id)"
                f" VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {PROVIDER_COLUMNS}",
                [
                    org_id,
                    values["name"],
                    values["kind"],
                    values.get("base_url"),
                    values["trust_tier"],
                    values["locality"],
                    values.get("key_id"),
                ],
            )
            row = await cur.fetchone()
    except UniqueViolation as exc:
        raise Conflict(f"a provider named {values['name']!r} exists", code="provider_exists") from exc
    assert row is not None
    row["models"] = []
    return row


async def delete_provider(org_id: UUID, provider_id: UUID) -> None:
    async with org_transaction(org_id) as conn:
        cur = await conn.execute("DELETE FROM providers WHERE id = %s RETURNING id", [provider_id])
        if await cur.fetchone() is None:
            raise NotFound("provider not found", code="provider_not_found")


async def add_model(org_id: UUID, provider_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    from psycopg.errors import UniqueViolation

    try:
        async with org_transaction(org_id) as conn:
            cur = await conn.execute("SELECT 1 FROM providers WHERE id = %s", [provider_id])
            if await cur.fetchone() is None:
                raise NotFound("provider not found", code="provider_not_found")
            cur = await conn.execute(
                "INSERT INTO provider_models (org_id, provider_id, name, tags, quality, input_price, output_price,"
                f" context_window) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {MODEL_COLUMNS}",
                [
                    org_id,
                    provider_id,
                    values["name"],
                    list(values["tags"]),
                    values["quality"],
                    values.get("input_price"),
                    values.get("output_price"),
                    values.get("context_window"),
                ],
            )
            row = await cur.fetchone()
    except UniqueViolation as exc:
        raise Conflict(f"model {values['name']!r} exists for this provider", code="model_exists") from exc
    assert row is not None
    return row


async def delete_model(org_id: UUID, provider_id: UUID, model_id: UUID) -> None:
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            "DELETE FROM provider_models WHERE id = %s AND provider_id = %s RETURNING id", [model_id, provider_id]
        )
        if await cur.fetchone() is None:
            raise NotFound("model not found", code="model_not_found")


async def update_model(org_id: UUID, provider_id: UUID, model_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """Change what is given of a model (enabled, tags, quality, prices; a null price goes back to genai-prices)."""
    allowed = ("enabled", "tags", "quality", "input_price", "output_price", "context_window")
    cleared = [k for k in ("enabled", "tags", "quality") if k in values and values[k] is None]
    if cleared:  # a price or window of null means "the default"; these have no default to go back to
        raise InvalidInput(f"{', '.join(cleared)} cannot be null", code="null_not_allowed")
    sets = {k: (list(v) if k == "tags" else v) for k, v in values.items() if k in allowed}
    assignments = ", ".join(f"{k} = %s" for k in sets) or "id = id"  # nothing sent: 404 first, then 422
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            f"UPDATE provider_models SET {assignments} WHERE id = %s AND provider_id = %s RETURNING {MODEL_COLUMNS}",
            [*sets.values(), model_id, provider_id],
        )
        row = await cur.fetchone()
    if row is None:
        raise NotFound("model not found", code="model_not_found")
    if not sets:
        raise InvalidInput("nothing to change", code="empty_update")
    return row


async def set_provider_enabled(org_id: UUID, provider_id: UUID, enabled: bool) -> dict[str, Any]:
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            f"UPDATE providers SET enabled = %s WHERE id = %s RETURNING {PROVIDER_COLUMNS}", [enabled, provider_id]
        )
        row = await cur.fetchone()
        if row is None:
            raise NotFound("provider not found", code="provider_not_found")
        cur = await conn.execute(
            f"SELECT {MODEL_COLUMNS} FROM provider_models WHERE provider_id = %s ORDER BY name", [provider_id]
        )
        row["models"] = await cur.fetchall()
    return row
