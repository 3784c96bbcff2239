"""An org's monthly caps (`budgets`): at most one per scope and user. Every call runs inside an org transaction."""

from __future__ import annotations

from decimal import Decimal
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = "id, scope, user_id, monthly_usd, created_at"


async def replace(conn: Conn, org_id: UUID, scope: str, user_id: UUID | None, monthly_usd: Decimal) -> dict[str, Any]:
    """The scope's (and user's) cap, replacing the one it had."""
    await conn.execute("DELETE FROM budgets WHERE scope = %s AND user_id IS NOT DISTINCT FROM %s", [scope, user_id])
    cur = await conn.execute(
        f"INSERT INTO budgets (org_id, scope, user_id, monthly_usd) VALUES (%s, %s, %s, %s) RETURNING {COLUMNS}",
        [org_id, scope, user_id, monthly_usd],
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def list_all(conn: Conn) -> list[dict[str, Any]]:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM budgets ORDER BY scope")
    return list(await cur.fetchall())


async def delete(conn: Conn, budget_id: UUID) -> bool:
    """False when the org has no such cap."""
    cur = await conn.execute("DELETE FROM budgets WHERE id = %s RETURNING id", [budget_id])
    return await cur.fetchone() is not None
