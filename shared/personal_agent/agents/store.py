"""The SQL of `agents` and `agent_versions` (0029). Reads return typed rows; the caller's transaction is the
org's (RLS), and who may see a private agent is the service's check."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb

COLUMNS = "id, slug, owner_id, visibility, builtin, published_version, latest_version, created_at, updated_at"


@dataclass(frozen=True)
class AgentRow:
    id: UUID
    slug: str
    owner_id: UUID | None
    visibility: str
    builtin: bool
    published_version: int
    latest_version: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class VersionRow:
    agent_id: UUID
    version: int
    config: dict[str, Any]
    created_by: UUID | None
    created_at: datetime


_VISIBLE = "(visibility = 'org' OR owner_id IS NULL OR owner_id = %s)"


async def insert(
    conn: Conn,
    org_id: UUID,
    owner_id: UUID | None,
    slug: str,
    visibility: str,
    config: dict[str, Any],
    *,
    builtin: bool = False,
) -> AgentRow | None:
    """A new agent with its version 1 (published); None when the slug is taken in the org."""
    cur = await conn.execute(
        "INSERT INTO agents (org_id, owner_id, slug, visibility, builtin) VALUES (%s, %s, %s, %s, %s)"
        f" ON CONFLICT (org_id, slug) DO NOTHING RETURNING {COLUMNS}",
        [org_id, owner_id, slug, visibility, builtin],
    )
    row = await cur.fetchone()
    if row is None:
        return None
    await conn.execute(
        "INSERT INTO agent_versions (agent_id, version, org_id, config, created_by) VALUES (%s, 1, %s, %s, %s)",
        [row["id"], org_id, jsonb(config), owner_id],
    )
    return AgentRow(**row)


async def list_visible(conn: Conn, user_id: UUID, q: str | None = None) -> list[tuple[AgentRow, dict[str, Any]]]:
    """The agents the user sees (the org's, the built-in, their own), each with its published configuration."""
    params: list[Any] = [user_id]
    where = _VISIBLE.replace("visibility", "a.visibility").replace("owner_id", "a.owner_id")
    if q:
        where += " AND (a.slug ILIKE %s OR v.config->>'name' ILIKE %s OR v.config->>'description' ILIKE %s)"
        like = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        params += [like, like, like]
    cur = await conn.execute(
        "SELECT a.id, a.slug, a.owner_id, a.visibility, a.builtin, a.published_version, a.latest_version,"
        " a.created_at, a.updated_at, v.config FROM agents a JOIN agent_versions v"
        f" ON v.agent_id = a.id AND v.version = a.published_version WHERE {where} ORDER BY a.builtin DESC, a.slug",
        params,
    )
    out = []
    for row in await cur.fetchall():
        config = row.pop("config")
        out.append((AgentRow(**row), config))
    return out


async def get_visible(conn: Conn, agent_id: UUID, user_id: UUID | None, *, lock: bool = False) -> AgentRow | None:
    """The agent, if `user_id` may see it (None: only org-visible and built-in agents)."""
    suffix = " FOR UPDATE" if lock else ""
    cur = await conn.execute(f"SELECT {COLUMNS} FROM agents WHERE id = %s AND {_VISIBLE}{suffix}", [agent_id, user_id])
    row = await cur.fetchone()
    return AgentRow(**row) if row else None


async def by_slug(conn: Conn, slug: str, user_id: UUID | None) -> AgentRow | None:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM agents WHERE slug = %s AND {_VISIBLE}", [slug, user_id])
    row = await cur.fetchone()
    return AgentRow(**row) if row else None


async def builtin(conn: Conn) -> AgentRow | None:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM agents WHERE builtin")
    row = await cur.fetchone()
    return AgentRow(**row) if row else None


async def existing_slugs(conn: Conn, slugs: list[str], user_id: UUID) -> set[str]:
    """Which of `slugs` name agents the user sees."""
    if not slugs:
        return set()
    cur = await conn.execute(f"SELECT slug FROM agents WHERE slug = ANY(%s) AND {_VISIBLE}", [slugs, user_id])
    return {r["slug"] for r in await cur.fetchall()}


async def version(conn: Conn, agent_id: UUID, number: int) -> VersionRow | None:
    cur = await conn.execute(
        "SELECT agent_id, version, config, created_by, created_at FROM agent_versions"
        " WHERE agent_id = %s AND version = %s",
        [agent_id, number],
    )
    row = await cur.fetchone()
    return VersionRow(**row) if row else None


async def versions(conn: Conn, agent_id: UUID) -> list[VersionRow]:
    cur = await conn.execute(
        "SELECT agent_id, version, config, created_by, created_at FROM agent_versions WHERE agent_id = %s"
        " ORDER BY version DESC",
        [agent_id],
    )
    return [VersionRow(**r) for r in await cur.fetchall()]


async def add_version(
    conn: Conn, org_id: UUID, agent: AgentRow, config: dict[str, Any], created_by: UUID, *, publish: bool
) -> AgentRow:
    """A new version after the agent's latest (the agent row locked by the caller), published if asked."""
    number = agent.latest_version + 1
    await conn.execute(
        "INSERT INTO agent_versions (agent_id, version, org_id, config, created_by) VALUES (%s, %s, %s, %s, %s)",
        [agent.id, number, org_id, jsonb(config), created_by],
    )
    cur = await conn.execute(
        "UPDATE agents SET latest_version = %s, published_version = CASE WHEN %s THEN %s ELSE published_version END,"
        f" updated_at = now() WHERE id = %s RETURNING {COLUMNS}",
        [number, publish, number, agent.id],
    )
    row = await cur.fetchone()
    assert row is not None
    return AgentRow(**row)


async def update_row(conn: Conn, agent_id: UUID, slug: str | None, visibility: str | None) -> AgentRow | None:
    """Change the slug or visibility (not versioned); None when the slug is taken."""
    cur = await conn.execute(
        "UPDATE agents SET slug = coalesce(%s, slug), visibility = coalesce(%s, visibility), updated_at = now()"
        f" WHERE id = %s AND NOT EXISTS (SELECT 1 FROM agents o WHERE o.slug = %s AND o.id <> %s) RETURNING {COLUMNS}",
        [slug, visibility, agent_id, slug, agent_id],
    )
    row = await cur.fetchone()
    return AgentRow(**row) if row else None


async def publish(conn: Conn, agent_id: UUID, number: int) -> AgentRow:
    cur = await conn.execute(
        f"UPDATE agents SET published_version = %s, updated_at = now() WHERE id = %s RETURNING {COLUMNS}",
        [number, agent_id],
    )
    row = await cur.fetchone()
    assert row is not None
    return AgentRow(**row)


async def delete(conn: Conn, agent_id: UUID) -> bool:
    cur = await conn.execute("DELETE FROM agents WHERE id = %s AND NOT builtin RETURNING id", [agent_id])
    return await cur.fetchone() is not None


async def for_export(conn: Conn, owner_id: UUID | None, limit: int) -> list[AgentRow]:
    """The agents a data export carries: those `owner_id` owns, or with None the org's (shared or built in)."""
    who = "owner_id = %s" if owner_id is not None else "(visibility = 'org' OR owner_id IS NULL) AND %s::uuid IS NULL"
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM agents WHERE {who} ORDER BY created_at, id LIMIT %s", [owner_id, limit]
    )
    return [AgentRow(**r) for r in await cur.fetchall()]
