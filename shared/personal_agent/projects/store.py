"""The only SQL on `projects` and `project_members` (0041). Every call runs in an org transaction (RLS); a project
the user is not a member of reads as missing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

ROLES = ("owner", "editor", "viewer")

_SELECT = (
    "SELECT p.id, p.name, p.instructions, p.agent_id, a.slug AS agent, p.collection_id, pm.role,"
    " p.created_at, p.updated_at FROM projects p"
    " JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = %s"
    " LEFT JOIN agents a ON a.id = p.agent_id"
)


@dataclass(frozen=True)
class ProjectRow:
    """A project as one of its members sees it (`role`: theirs)."""

    id: UUID
    name: str
    instructions: str
    agent_id: UUID | None
    agent: str | None
    """The default agent's slug (None: the chat's, else the built-in one)."""
    collection_id: UUID | None
    role: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ProjectMember:
    user_id: UUID
    email: str | None
    name: str | None
    role: str


@dataclass(frozen=True)
class RunProject:
    """What a run in the project's chat takes from it at launch."""

    id: UUID
    name: str
    instructions: str
    collection_id: UUID | None


async def insert(
    conn: Conn,
    org_id: UUID,
    user_id: UUID,
    name: str,
    instructions: str,
    agent_id: UUID | None,
    collection: tuple[UUID, bool],
) -> UUID:
    """A new project with its creator as its owner; `collection`: its id and whether it was made for the project."""
    cur = await conn.execute(
        "INSERT INTO projects (org_id, name, instructions, agent_id, collection_id, own_collection, created_by)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
        [org_id, name, instructions, agent_id, *collection, user_id],
    )
    row = await cur.fetchone()
    assert row is not None
    await put_member(conn, org_id, row["id"], user_id, "owner")
    return UUID(str(row["id"]))


async def for_member(conn: Conn, project_id: UUID, user_id: UUID) -> ProjectRow | None:
    cur = await conn.execute(f"{_SELECT} WHERE p.id = %s", [user_id, project_id])
    row = await cur.fetchone()
    return ProjectRow(**row) if row is not None else None


async def list_for_member(conn: Conn, user_id: UUID) -> list[ProjectRow]:
    cur = await conn.execute(f"{_SELECT} ORDER BY p.updated_at DESC, p.id DESC LIMIT 500", [user_id])
    return [ProjectRow(**row) for row in await cur.fetchall()]


async def update(conn: Conn, project_id: UUID, changes: dict[str, Any]) -> None:
    """Set the columns named in `changes` (name, instructions, agent_id)."""
    allowed = {k: v for k, v in changes.items() if k in ("name", "instructions", "agent_id")}
    if not allowed:
        return
    sets = ", ".join(f"{column} = %s" for column in allowed)
    await conn.execute(f"UPDATE projects SET {sets}, updated_at = now() WHERE id = %s", [*allowed.values(), project_id])


async def owns_collection(conn: Conn, project_id: UUID) -> bool:
    """Whether the project's collection was made for it (its members follow the project's)."""
    cur = await conn.execute("SELECT own_collection FROM projects WHERE id = %s", [project_id])
    row = await cur.fetchone()
    return bool(row and row["own_collection"])


async def delete(conn: Conn, project_id: UUID) -> None:
    await conn.execute("DELETE FROM projects WHERE id = %s", [project_id])


async def members(conn: Conn, project_id: UUID) -> list[ProjectMember]:
    cur = await conn.execute(
        "SELECT pm.user_id, u.email, u.display_name AS name, pm.role"
        " FROM project_members pm JOIN users u ON u.id = pm.user_id WHERE pm.project_id = %s"
        " ORDER BY array_position(%s::text[], pm.role), lower(coalesce(u.display_name, u.email, ''))",
        [project_id, list(ROLES)],
    )
    return [ProjectMember(**row) for row in await cur.fetchall()]


async def put_member(conn: Conn, org_id: UUID, project_id: UUID, user_id: UUID, role: str) -> None:
    await conn.execute(
        "INSERT INTO project_members (project_id, org_id, user_id, role) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (project_id, user_id) DO UPDATE SET role = excluded.role",
        [project_id, org_id, user_id, role],
    )


async def remove_member(conn: Conn, project_id: UUID, user_id: UUID) -> bool:
    cur = await conn.execute(
        "DELETE FROM project_members WHERE project_id = %s AND user_id = %s RETURNING user_id", [project_id, user_id]
    )
    return await cur.fetchone() is not None


async def role_of(conn: Conn, project_id: UUID, user_id: UUID | None) -> str | None:
    cur = await conn.execute(
        "SELECT role FROM project_members WHERE project_id = %s AND user_id = %s", [project_id, user_id]
    )
    row = await cur.fetchone()
    return str(row["role"]) if row else None


async def org_member(conn: Conn, org_id: UUID, user_id: UUID | None, email: str | None) -> UUID | None:
    """The member of the org named by id or e-mail (None: nobody of this org)."""
    cur = await conn.execute(
        "SELECT u.id FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = %s"
        " AND (u.id = %s OR lower(u.email) = lower(%s)) LIMIT 1",
        [org_id, user_id, email],
    )
    row = await cur.fetchone()
    return UUID(str(row["id"])) if row else None


async def for_run(conn: Conn, project_id: UUID) -> RunProject | None:
    """The project a chat is in, as its runs take it at launch."""
    cur = await conn.execute("SELECT id, name, instructions, collection_id FROM projects WHERE id = %s", [project_id])
    row = await cur.fetchone()
    return RunProject(**row) if row is not None else None


async def default_agent(conn: Conn, chat_id: UUID) -> UUID | None:
    """The default agent of the project the chat is in (None: none, or the chat is in no project)."""
    cur = await conn.execute(
        "SELECT p.agent_id FROM chats c JOIN projects p ON p.id = c.project_id WHERE c.id = %s", [chat_id]
    )
    row = await cur.fetchone()
    return row["agent_id"] if row else None
