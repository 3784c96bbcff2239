"""The webhook rate windows (`workflow_rate_windows`): one row per workflow counting the hits of its current minute."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from personal_agent.db import org_transaction


async def hit(org_id: UUID, workflow_id: UUID, window: datetime) -> int:
    """Count one hit in the window starting at `window` (a newer window starts again at 1); the window's hits."""
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            "INSERT INTO workflow_rate_windows AS w (workflow_id, org_id, window_start, hits) VALUES (%s, %s, %s, 1)"
            " ON CONFLICT (workflow_id) DO UPDATE SET window_start = greatest(w.window_start, EXCLUDED.window_start),"
            " hits = CASE WHEN w.window_start >= EXCLUDED.window_start THEN w.hits + 1 ELSE 1 END"
            " RETURNING hits",
            [workflow_id, org_id, window],
        )
        row = await cur.fetchone()
    assert row is not None
    return int(row["hits"])
