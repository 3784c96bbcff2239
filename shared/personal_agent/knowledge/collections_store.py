"""The SQL of `knowledge_collections` and `knowledge_collection_members` (migration 0030): a named collection and
who may read or write it. The caller's knowledge transaction decides what is visible (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.db.pool import Conn

ROLES = ("owner", "writer", "reader")


@dataclass(frozen=True)
class Collection:
    id: UUID
    name: str
    description: str
    created_by: UUID | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Member:
    user_id: UUID
    role: str
    email: str | None


_COLUMNS = "id, name, description, created_by, created_at, updated_at"


async def insert(conn: Conn, org_id: UUID, name: str, description: str, created_by: UUID) -> Collection:
    cur = await conn.execute(
        f"""INSERT INTO knowledge_collections (org_id, name, description, created_by) VALUES (%s, %s, %s, %s)
            RETURNING {_COLUMNS}""",
        [org_id, name, description, created_by],
    )
    row = await cur.fetchone()
    assert row is not None
    return Collection(**row)


async def get(conn: Conn, collection_id: UUID) -> Collection | None:
    cur = await conn.execute(f"SELECT {_COLUMNS} FROM knowledge_collections WHERE id = %s", [collection_id])
    row = await cur.fetchone()
    return Collection(**row) if row else None


async def by_name(conn: Conn, name: str) -> Collection | None:
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM knowledge_collections WHERE lower(name) = lower(%s)", [name.strip()]
    )
    row = await cur.fetchone()
    return Collection(**row) if row else None


async def list_visible(conn: Conn) -> list[Collection]:
    """The collections the session sees (its own memberships; an org admin's session: every one)."""
    cur = await conn.execute(f"SELECT {_COLUMNS} FROM knowledge_collections ORDER BY lower(name), id")
    return [Collection(**r) for r in await cur.fetchall()]


async def update(conn: Conn, collection_id: UUID, name: str | None, description: str | None) -> Collection | None:
    cur = await conn.execute(
        f"""UPDATE knowledge_collections SET name = COALESCE(%s, name), description = COALESCE(%s, description),
                updated_at = now() WHERE id = %s RETURNING {_COLUMNS}""",
        [name, description, collection_id],
    )
    row = await cur.fetchone()
    return Collection(**row) if row else None


async def delete(conn: Conn, collection_id: UUID) -> bool:
    """Delete it (its documents, chunks, sources and members go with it: ON DELETE CASCADE)."""
    cur = await conn.execute("DELETE FROM knowledge_collections WHERE id = %s RETURNING id", [collection_id])
    return await cur.fetchone() is not None


async def object_keys(conn: Conn, collection_id: UUID) -> list[str]:
    """The stored files of the collection's documents (deleted from the bucket after the rows)."""
    cur = await conn.execute("SELECT object_key FROM knowledge_documents WHERE collection_id = %s", [collection_id])
    return [r["object_key"] for r in await cur.fetchall()]


async def members(conn: Conn, collection_id: UUID) -> list[Member]:
    cur = await conn.execute(
        """SELECT m.user_id, m.role, u.email FROM knowledge_collection_members m JOIN users u ON u.id = m.user_id
           WHERE m.collection_id = %s ORDER BY m.role, u.email NULLS LAST, m.user_id""",
        [collection_id],
    )
    return [Member(**r) for r in await cur.fetchall()]


async def replace_members(conn: Conn, org_id: UUID, collection_id: UUID, roles: dict[UUID, str], caller: UUID) -> None:
    """The collection's members become exactly `roles` (user -> owner, writer or reader). The policies of migration
    0030 check each write against the caller's role at that moment, so the caller's own row is written first when
    they stay an owner and last when they do not."""
    upsert = """INSERT INTO knowledge_collection_members (collection_id, org_id, user_id, role) VALUES (%s, %s, %s, %s)
                ON CONFLICT (collection_id, user_id) DO UPDATE SET role = EXCLUDED.role"""
    if roles.get(caller) == "owner":  # an owner stays one: first, so every later write is the owner's
        await conn.execute(upsert, [collection_id, org_id, caller, "owner"])
    async with conn.cursor() as cur:
        await cur.executemany(
            upsert, [(collection_id, org_id, user_id, role) for user_id, role in roles.items() if user_id != caller]
        )
    await conn.execute(
        "DELETE FROM knowledge_collection_members WHERE collection_id = %s AND NOT (user_id = ANY(%s))"
        " AND user_id <> %s",
        [collection_id, list(roles), caller],
    )
    if caller in roles:
        await conn.execute(upsert, [collection_id, org_id, caller, roles[caller]])
    else:
        await conn.execute(
            "DELETE FROM knowledge_collection_members WHERE collection_id = %s AND user_id = %s",
            [collection_id, caller],
        )


async def role_of(conn: Conn, collection_id: UUID, user_id: UUID) -> str | None:
    cur = await conn.execute(
        "SELECT role FROM knowledge_collection_members WHERE collection_id = %s AND user_id = %s",
        [collection_id, user_id],
    )
    row = await cur.fetchone()
    return str(row["role"]) if row else None


async def readable_ids(conn: Conn, user_id: UUID) -> list[UUID]:
    """The collections `user_id` is a member of (any role)."""
    cur = await conn.execute(
        "SELECT collection_id FROM knowledge_collection_members WHERE user_id = %s ORDER BY collection_id", [user_id]
    )
    return [r["collection_id"] for r in await cur.fetchall()]


async def org_users(conn: Conn, org_id: UUID, ids: list[UUID], emails: list[str]) -> dict[str, UUID]:
    """Members of the org named by id or e-mail: {what was given (ids as text, e-mails lower-case): user id}."""
    cur = await conn.execute(
        """SELECT u.id, lower(u.email) AS email FROM memberships m JOIN users u ON u.id = m.user_id
           WHERE m.org_id = %s AND (u.id = ANY(%s) OR lower(u.email) = ANY(%s))""",
        [org_id, ids, emails],
    )
    found: dict[str, UUID] = {}
    for r in await cur.fetchall():
        found[str(r["id"])] = r["id"]
        if r["email"]:
            found[r["email"]] = r["id"]
    return found
