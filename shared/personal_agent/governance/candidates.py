"""An org's model candidates: the platform's, the org's own providers (from Postgres), and registered ones."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.models.catalog import ModelInfo, platform_models, platform_price, registered_models

PLATFORM_KEY_KINDS = ("openai", "anthropic")


def _org_model(row: dict[str, Any]) -> ModelInfo:
    """An org's model. It uses the platform's key only with no BYOK key and no base_url of its own (the
    platform's endpoint), Bedrock always (the platform's AWS account); such usage is priced at the
    platform's price, whatever price the admin set."""
    kind = row["kind"]
    base_url, key_id = (None, None) if kind == "bedrock" else (row["base_url"], row["key_id"])
    platform_key = kind == "bedrock" or (kind in PLATFORM_KEY_KINDS and key_id is None and base_url is None)
    if platform_key:
        input_price, output_price = platform_price(kind, row["name"])
    else:
        input_price = float(row["input_price"]) if row["input_price"] is not None else None
        output_price = float(row["output_price"]) if row["output_price"] is not None else None
    return ModelInfo(
        id=f"{row['provider_name']}:{row['name']}",
        label=f"{row['name']} ({row['provider_name']})",
        provider=row["provider_name"],
        kind=kind,
        tier=row["trust_tier"],
        model_name=row["name"],
        locality=row["locality"],
        tags=tuple(row["tags"]),
        quality=row["quality"],
        input_price=input_price,
        output_price=output_price,
        base_url=base_url,
        key_id=key_id,
        platform_key=platform_key,
        **({"context_window": row["context_window"]} if row.get("context_window") else {}),
    )


async def read_org_models(conn: Conn) -> list[ModelInfo]:
    """The org's own models, in the caller's org transaction."""
    cur = await conn.execute(
        "SELECT p.name AS provider_name, p.kind, p.base_url, p.trust_tier, p.locality, p.key_id,"
        " m.name, m.tags, m.quality, m.input_price, m.output_price, m.context_window"
        " FROM provider_models m JOIN providers p ON p.id = m.provider_id"
        " WHERE m.enabled AND p.enabled ORDER BY p.name, m.name"
    )
    return [_org_model(r) for r in await cur.fetchall()]


async def org_models(org_id: UUID) -> list[ModelInfo]:
    async with org_transaction(org_id) as conn:
        return await read_org_models(conn)


def merge_candidates(own: list[ModelInfo]) -> list[ModelInfo]:
    """Every model this org may name; an org's own entry wins over a platform one with the same id."""
    merged: dict[str, ModelInfo] = {}
    for info in [*platform_models(), *registered_models(), *own]:
        merged[info.id] = info
    return list(merged.values())


async def candidates(org_id: UUID) -> list[ModelInfo]:
    """Every model this org may name; an org's own entry wins over a platform one with the same id."""
    return merge_candidates(await org_models(org_id))


async def read_org_settings(conn: Conn, org_id: UUID) -> dict[str, Any]:
    """The org's routing settings and its trace content choice (defaults when it has none), in the caller's org
    transaction."""
    cur = await conn.execute(
        "SELECT tier_floor, confidence_threshold, routing_model, default_model, trace_content"
        " FROM org_settings WHERE org_id = %s",
        [org_id],
    )
    row = await cur.fetchone()
    defaults = {"tier_floor": 0, "confidence_threshold": 0.8, "routing_model": None, "default_model": None}
    return row or {**defaults, "trace_content": False}
