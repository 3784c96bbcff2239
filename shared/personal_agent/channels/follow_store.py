"""A channel run's thread follower (`channel_follows`): where the run's answer goes, how far its thread is answered,
and who reads its stream now, so one follower at a time answers the thread, and a run resumed after its follower
ended gets a new one. Calls run in the caller's org transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from personal_agent.channels.config_store import ChannelKind
from personal_agent.db.pool import Conn, jsonb


@dataclass(frozen=True)
class Follow:
    org_id: UUID
    run_id: UUID
    kind: ChannelKind
    reply: dict[str, Any]
    position: str | None
    """The run's stream id the thread is answered up to (None: from the start)."""


_RETURNING = "RETURNING org_id, run_id, kind, reply, position"


async def begin(
    conn: Conn, org_id: UUID, run_id: UUID, kind: ChannelKind, reply: dict[str, Any], seconds: float
) -> None:
    """The run's follower, held by the caller for `seconds` from now (the run was just launched)."""
    await conn.execute(
        "INSERT INTO channel_follows (org_id, run_id, kind, reply, held_until)"
        " VALUES (%s, %s, %s, %s, now() + make_interval(secs => %s)) ON CONFLICT (run_id) DO NOTHING",
        [org_id, run_id, kind, jsonb(reply), seconds],
    )


async def claim(conn: Conn, run_id: UUID, seconds: float) -> Follow | None:
    """Hold the run's thread for `seconds` when nobody holds it (None: no channel run, or another follower has it)."""
    cur = await conn.execute(
        "UPDATE channel_follows SET held_until = now() + make_interval(secs => %s), resumed = false"
        " WHERE run_id = %s AND (held_until IS NULL OR held_until < now()) " + _RETURNING,
        [seconds, run_id],
    )
    row = await cur.fetchone()
    return Follow(**row) if row else None


async def release(conn: Conn, run_id: UUID, position: str | None) -> bool:
    """Let go of the thread, answered up to `position`; whether the run resumed meanwhile."""
    cur = await conn.execute(
        "UPDATE channel_follows SET held_until = NULL, position = COALESCE(%s, position) WHERE run_id = %s"
        " RETURNING resumed",
        [position, run_id],
    )
    row = await cur.fetchone()
    return bool(row and row["resumed"])


async def mark_resumed(conn: Conn, run_id: UUID) -> tuple[ChannelKind, bool] | None:
    """Note that the run went on: its channel, and whether a follower holds its thread now (None: no channel run)."""
    cur = await conn.execute(
        "UPDATE channel_follows SET resumed = true WHERE run_id = %s"
        " RETURNING kind, held_until IS NOT NULL AND held_until > now() AS held",
        [run_id],
    )
    row = await cur.fetchone()
    return (row["kind"], bool(row["held"])) if row else None
