"""Orgs (`orgs`), named by their slug. Calls run in the caller's (system) transaction."""

from __future__ import annotations

from uuid import UUID

from personal_agent.db.pool import Conn


async def id_of(conn: Conn, slug: str) -> UUID | None:
    row = await (await conn.execute("SELECT id FROM orgs WHERE slug = %s", [slug])).fetchone()
    return UUID(str(row["id"])) if row else None


async def ensure(conn: Conn, slug: str) -> UUID:
    """The org's id, created (named for its slug) when it does not exist."""
    await conn.execute("INSERT INTO orgs (slug, name) VALUES (%s, %s) ON CONFLICT (slug) DO NOTHING", [slug, slug])
    org_id = await id_of(conn, slug)
    assert org_id is not None
    return org_id
