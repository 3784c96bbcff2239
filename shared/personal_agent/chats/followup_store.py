"""Follow-ups: messages that wait for their chat's active run to end. The only SQL on `chat_followups`. Every call
runs inside an org transaction (RLS). A queue is read and changed only with its chat's row locked (`lock_queue`),
so a message that arrives while a run ends is either queued before the end looks at the queue, or sees the run
ended and starts at once: never queued behind a run that already looked."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb

Policy = Literal["reject", "enqueue", "interrupt"]
COLUMNS = "id, chat_id, user_id, run_id, message, source, status, error, created_at, decided_at"


@dataclass(frozen=True)
class ChatQueue:
    """A chat locked for its queue: its follow-up policy and how many messages wait."""

    policy: Policy
    queued: int


@dataclass(frozen=True)
class FollowUpRow:
    """A follow-up as its sender sees it."""

    id: UUID
    chat_id: UUID
    user_id: UUID | None
    run_id: UUID
    message: str
    source: str
    status: str
    error: dict[str, Any] | None
    created_at: datetime
    decided_at: datetime | None


@dataclass(frozen=True)
class QueuedLaunch:
    """The oldest queued follow-up of a chat, with what launches its run."""

    id: UUID
    request: dict[str, Any]


async def lock_queue(conn: Conn, chat_id: UUID) -> ChatQueue | None:
    """Lock the chat until the transaction ends; its policy and queue length (None: no such chat)."""
    cur = await conn.execute(
        "SELECT c.followup_policy AS policy, (SELECT count(*) FROM chat_followups f WHERE f.chat_id = c.id"
        " AND f.status = 'queued') AS queued FROM chats c WHERE c.id = %s FOR UPDATE OF c",
        [chat_id],
    )
    row = await cur.fetchone()
    return ChatQueue(row["policy"], int(row["queued"])) if row else None


async def add(
    conn: Conn,
    org_id: UUID,
    chat_id: UUID,
    user_id: UUID | None,
    run_id: UUID,
    message: str,
    request: dict[str, Any],
    source: str,
) -> FollowUpRow:
    cur = await conn.execute(
        "INSERT INTO chat_followups (org_id, chat_id, user_id, run_id, message, request, source)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {COLUMNS}",
        [org_id, chat_id, user_id, run_id, message, jsonb(request), source],
    )
    row = await cur.fetchone()
    assert row is not None
    return FollowUpRow(**row)


async def next_queued(conn: Conn, chat_id: UUID) -> QueuedLaunch | None:
    """The chat's oldest queued follow-up."""
    cur = await conn.execute(
        "SELECT id, request FROM chat_followups WHERE chat_id = %s AND status = 'queued' ORDER BY seq LIMIT 1",
        [chat_id],
    )
    row = await cur.fetchone()
    return QueuedLaunch(**row) if row else None


async def mark_started(conn: Conn, followup_id: UUID) -> bool:
    """Its run is being stored (in the launch's transaction); False when it is no longer queued."""
    cur = await conn.execute(
        "UPDATE chat_followups SET status = 'started', decided_at = now() WHERE id = %s AND status = 'queued'"
        " RETURNING id",
        [followup_id],
    )
    return await cur.fetchone() is not None


async def mark_failed(conn: Conn, followup_id: UUID, error: dict[str, Any]) -> None:
    await conn.execute(
        "UPDATE chat_followups SET status = 'failed', error = %s, decided_at = now()"
        " WHERE id = %s AND status = 'queued'",
        [jsonb(error), followup_id],
    )


async def cancel(conn: Conn, followup_id: UUID, chat_id: UUID, user_id: UUID) -> FollowUpRow | None:
    """Cancel the sender's queued follow-up; None when it is not theirs or no longer queued."""
    cur = await conn.execute(
        "UPDATE chat_followups SET status = 'cancelled', decided_at = now() WHERE id = %s AND chat_id = %s"
        f" AND user_id = %s AND status = 'queued' RETURNING {COLUMNS}",
        [followup_id, chat_id, user_id],
    )
    row = await cur.fetchone()
    return FollowUpRow(**row) if row else None


async def get(conn: Conn, followup_id: UUID, chat_id: UUID) -> FollowUpRow | None:
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM chat_followups WHERE id = %s AND chat_id = %s", [followup_id, chat_id]
    )
    row = await cur.fetchone()
    return FollowUpRow(**row) if row else None


async def by_run(conn: Conn, run_id: UUID) -> tuple[FollowUpRow, dict[str, Any]] | None:
    """The follow-up that starts (or started) as `run_id`, with its stored launch request."""
    cur = await conn.execute(f"SELECT {COLUMNS}, request FROM chat_followups WHERE run_id = %s", [run_id])
    row = await cur.fetchone()
    if row is None:
        return None
    request = row.pop("request")
    return FollowUpRow(**row), request


async def queued_of(conn: Conn, chat_id: UUID) -> list[FollowUpRow]:
    """The chat's queued follow-ups, in the order they will start."""
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM chat_followups WHERE chat_id = %s AND status = 'queued' ORDER BY seq", [chat_id]
    )
    return [FollowUpRow(**row) for row in await cur.fetchall()]
