"""The only SQL on `member_erasures` (0048): the record of an org admin's erase of a member's content (counts, never
content), inside the org's transaction (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from personal_agent.db.pool import Conn

_COLUMNS = "id, user_id, erased_by, chats, memories, files, exports, created_at"


@dataclass(frozen=True)
class MemberErasure:
    id: int
    user_id: UUID
    erased_by: UUID
    chats: int
    memories: int
    files: int
    exports: int
    created_at: datetime


async def record(conn: Conn, org_id: UUID, user_id: UUID, erased_by: UUID, counts: dict[str, int]) -> MemberErasure:
    cur = await conn.execute(
        "INSERT INTO member_erasures (org_id, user_id, erased_by, chats, memories, files, exports)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
        [org_id, user_id, erased_by, counts["chats"], counts["memories"], counts["files"], counts["exports"]],
    )
    row = await cur.fetchone()
    assert row is not None
    return MemberErasure(**row)


async def recent(conn: Conn, limit: int) -> list[MemberErasure]:
    """The org's erasures, newest first."""
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM member_erasures ORDER BY created_at DESC, id DESC LIMIT %s", [limit]
    )
    return [MemberErasure(**row) for row in await cur.fetchall()]
