"""The org's tool rules (`tool_policies`), in their order: the only SQL on the table. Every call runs inside an org
transaction (RLS); a change takes the org's rules lock first, so two admins editing at once keep one order."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = "id, position, tool, when_expr, effect, reason, log_only, quorum, created_by, created_at, updated_at"
EDITABLE = ("tool", "when_expr", "effect", "reason", "log_only", "quorum")


@dataclass(frozen=True)
class PolicyRow:
    """One rule as stored (`position`: 0 first)."""

    id: UUID
    position: int
    tool: str
    when_expr: str
    effect: str
    reason: str
    log_only: bool
    quorum: int
    created_by: UUID | None
    created_at: datetime
    updated_at: datetime


async def lock_rules(conn: Conn, org_id: UUID) -> None:
    """Serialise changes to the org's rules until the transaction ends."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext('tool_policies'), hashtext(%s::text))", [org_id])


async def list_rules(conn: Conn) -> list[PolicyRow]:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM tool_policies ORDER BY position, created_at, id")
    return [PolicyRow(**row) for row in await cur.fetchall()]


async def get_rule(conn: Conn, rule_id: UUID) -> PolicyRow | None:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM tool_policies WHERE id = %s", [rule_id])
    row = await cur.fetchone()
    return PolicyRow(**row) if row is not None else None


async def insert_rule(conn: Conn, org_id: UUID, position: int, values: dict[str, Any], by: UUID) -> PolicyRow:
    """Insert at `position`, moving the rules from there on one down."""
    await conn.execute("UPDATE tool_policies SET position = position + 1 WHERE position >= %s", [position])
    cur = await conn.execute(
        "INSERT INTO tool_policies (org_id, position, tool, when_expr, effect, reason, log_only, quorum, created_by)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING {COLUMNS}",
        [org_id, position, *(values[k] for k in EDITABLE), by],
    )
    row = await cur.fetchone()
    assert row is not None
    return PolicyRow(**row)


async def update_rule(conn: Conn, rule_id: UUID, values: dict[str, Any]) -> PolicyRow | None:
    """Change the given fields (of `EDITABLE`) of one rule."""
    fields = [k for k in EDITABLE if k in values]
    assignments = ", ".join(f"{k} = %s" for k in fields)
    cur = await conn.execute(
        f"UPDATE tool_policies SET {assignments}, updated_at = now() WHERE id = %s RETURNING {COLUMNS}",
        [*(values[k] for k in fields), rule_id],
    )
    row = await cur.fetchone()
    return PolicyRow(**row) if row is not None else None


async def set_order(conn: Conn, ordered: list[UUID]) -> None:
    """Number the rules 0.. in the order of `ordered` (every rule of the org, each once)."""
    await conn.execute(
        "UPDATE tool_policies t SET position = o.n - 1, updated_at = now()"
        " FROM unnest(%s::uuid[]) WITH ORDINALITY AS o(id, n) WHERE t.id = o.id",
        [ordered],
    )


async def delete_rule(conn: Conn, rule_id: UUID) -> bool:
    cur = await conn.execute("DELETE FROM tool_policies WHERE id = %s RETURNING position", [rule_id])
    row = await cur.fetchone()
    if row is None:
        return False
    await conn.execute("UPDATE tool_policies SET position = position - 1 WHERE position > %s", [row["position"]])
    return True
