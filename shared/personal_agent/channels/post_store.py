"""The SQL of `channel_posts`: which run's answer a message the agent posted carries, so a reaction to it rates that
run. Calls run in the caller's org transaction."""

from __future__ import annotations

from uuid import UUID

from personal_agent.channels.config_store import ChannelKind
from personal_agent.db.pool import Conn


async def remember(conn: Conn, org_id: UUID, kind: ChannelKind, message_key: str, run_id: UUID) -> None:
    await conn.execute(
        "INSERT INTO channel_posts (org_id, kind, message_key, run_id) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (org_id, kind, message_key) DO UPDATE SET run_id = EXCLUDED.run_id",
        [org_id, kind, message_key[:300], run_id],
    )


async def run_of(conn: Conn, kind: ChannelKind, message_key: str) -> UUID | None:
    """The run whose answer the message carries; None for a message the agent did not post."""
    cur = await conn.execute(
        "SELECT run_id FROM channel_posts WHERE kind = %s AND message_key = %s", [kind, message_key[:300]]
    )
    row = await cur.fetchone()
    return row["run_id"] if row else None
