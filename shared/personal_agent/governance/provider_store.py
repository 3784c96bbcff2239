"""An org's model providers (`providers`). Every call runs inside an org transaction (RLS)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = "id, name, kind, base_url, trust_tier, locality, key_id, enabled, created_at"


async def list_all(conn: Conn) -> list[dict[str, Any]]:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM providers ORDER BY name")
    return list(await cur.fetchall())


async def get(conn: Conn, provider_id: UUID) -> dict[str, Any] | None:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM providers WHERE id = %s", [provider_id])
    return await cur.fetchone()


async def exists(conn: Conn, provider_id: UUID) -> bool:
    cur = await conn.execute("SELECT 1 FROM providers WHERE id = %s", [provider_id])
    return await cur.fetchone() is not None


async def insert(conn: Conn, org_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """The new provider (a duplicate name raises psycopg's UniqueViolation)."""
    cur = await conn.execute(
        "INSERT INTO providers (org_id, name, kind, base_url, trust_tier, locality, key_id)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {COLUMNS}",
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
    assert row is not None
    return row


async def delete(conn: Conn, provider_id: UUID) -> bool:
    """False when there was no such provider."""
    cur = await conn.execute("DELETE FROM providers WHERE id = %s RETURNING id", [provider_id])
    return await cur.fetchone() is not None


async def set_enabled(conn: Conn, provider_id: UUID, enabled: bool) -> dict[str, Any] | None:
    cur = await conn.execute(
        f"UPDATE providers SET enabled = %s WHERE id = %s RETURNING {COLUMNS}", [enabled, provider_id]
    )
    return await cur.fetchone()


CHANGEABLE = ("base_url", "key_id", "trust_tier", "locality", "enabled")


async def update(conn: Conn, provider_id: UUID, values: dict[str, Any]) -> dict[str, Any] | None:
    """Set the `CHANGEABLE` columns given; None when there is no such provider."""
    sets = {k: v for k, v in values.items() if k in CHANGEABLE}
    if not sets:
        return await get(conn, provider_id)
    assignments = ", ".join(f"{column} = %s" for column in sets)
    cur = await conn.execute(
        f"UPDATE providers SET {assignments} WHERE id = %s RETURNING {COLUMNS}", [*sets.values(), provider_id]
    )
    return await cur.fetchone()
