"""The models an org's providers offer (`provider_models`). Every call runs inside an org transaction (RLS)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = "id, provider_id, name, tags, quality, input_price, output_price, context_window, enabled, created_at"
CHANGEABLE = ("enabled", "tags", "quality", "input_price", "output_price", "context_window")


async def list_all(conn: Conn) -> list[dict[str, Any]]:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM provider_models ORDER BY name")
    return list(await cur.fetchall())


async def of_provider(conn: Conn, provider_id: UUID) -> list[dict[str, Any]]:
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM provider_models WHERE provider_id = %s ORDER BY name", [provider_id]
    )
    return list(await cur.fetchall())


async def insert(conn: Conn, org_id: UUID, provider_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """The new model (a duplicate name for the provider raises psycopg's UniqueViolation)."""
    cur = await conn.execute(
        "INSERT INTO provider_models (org_id, provider_id, name, tags, quality, input_price, output_price,"
        f" context_window) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {COLUMNS}",
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
    assert row is not None
    return row


async def delete(conn: Conn, provider_id: UUID, model_id: UUID) -> bool:
    """False when the provider has no such model."""
    cur = await conn.execute(
        "DELETE FROM provider_models WHERE id = %s AND provider_id = %s RETURNING id", [model_id, provider_id]
    )
    return await cur.fetchone() is not None


async def update(conn: Conn, provider_id: UUID, model_id: UUID, sets: dict[str, Any]) -> dict[str, Any] | None:
    """Set the `CHANGEABLE` columns in `sets` (none: the row unchanged); None when the provider has no such model."""
    columns = {k: v for k, v in sets.items() if k in CHANGEABLE}
    assignments = ", ".join(f"{k} = %s" for k in columns) or "id = id"
    cur = await conn.execute(
        f"UPDATE provider_models SET {assignments} WHERE id = %s AND provider_id = %s RETURNING {COLUMNS}",
        [*columns.values(), model_id, provider_id],
    )
    return await cur.fetchone()
