"""Deliveries: each webhook request and schedule fire, claimed under a unique key before its run starts.

The first request with a key wins the claim and launches the run; a concurrent duplicate waits (bounded)
for the winner to record the run id, then answers with the same run. A claim whose holder failed is
released so the sender's retry can start it; one whose holder vanished is taken over after `STALE_SECONDS`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn, jsonb

Source = Literal["webhook", "schedule"]
STALE_SECONDS = 60
WAIT_SECONDS = 25.0


@dataclass(frozen=True)
class Delivery:
    id: UUID
    run_id: UUID | None
    status: str
    won: bool  # this caller holds the claim and must start (or release) the run


@dataclass(frozen=True)
class HistoryRow:
    """A delivery with the run it started (the run's columns are None when it started none)."""

    delivery_id: UUID
    source: str
    dedupe_key: str
    delivery_status: str
    delivery_error: Any
    received_at: datetime
    run_id: UUID | None
    run_status: str | None
    mode: str | None
    run_error: Any
    started_at: datetime | None
    finished_at: datetime | None


async def history(conn: Conn, workflow_id: UUID, before: tuple[datetime, UUID] | None, limit: int) -> list[HistoryRow]:
    """The workflow's deliveries received before the keyset `before`, newest first, each with its run."""
    page = "" if before is None else " AND (d.created_at, d.id) < (%s, %s)"
    cur = await conn.execute(
        "SELECT d.id AS delivery_id, d.source, d.dedupe_key, d.status AS delivery_status,"
        " d.error AS delivery_error, d.created_at AS received_at, r.id AS run_id, r.status AS run_status,"
        " r.mode, r.error AS run_error, r.started_at, r.finished_at"
        " FROM workflow_deliveries d LEFT JOIN runs r ON r.id = d.run_id"
        f" WHERE d.workflow_id = %s{page} ORDER BY d.created_at DESC, d.id DESC LIMIT %s",
        [workflow_id, *(before or ()), limit],
    )
    return [HistoryRow(**row) for row in await cur.fetchall()]


async def claim_in(conn: Conn, org_id: UUID, workflow_id: UUID, source: Source, key: str) -> Delivery:
    """Claim `key` inside the caller's transaction, or report the delivery that already has it."""
    cur = await conn.execute(
        "INSERT INTO workflow_deliveries (org_id, workflow_id, source, dedupe_key) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (workflow_id, source, dedupe_key) DO NOTHING RETURNING id",
        [org_id, workflow_id, source, key],
    )
    row = await cur.fetchone()
    if row is not None:
        return Delivery(row["id"], None, "pending", won=True)
    cur = await conn.execute(
        "UPDATE workflow_deliveries SET claimed_at = now() WHERE workflow_id = %s AND source = %s AND dedupe_key = %s"
        " AND status = 'pending' AND claimed_at < now() - make_interval(secs => %s) RETURNING id",
        [workflow_id, source, key, STALE_SECONDS],
    )
    row = await cur.fetchone()
    if row is not None:
        return Delivery(row["id"], None, "pending", won=True)
    cur = await conn.execute(
        "SELECT id, run_id, status FROM workflow_deliveries WHERE workflow_id = %s AND source = %s AND dedupe_key = %s",
        [workflow_id, source, key],
    )
    row = await cur.fetchone()
    if row is None:  # released between the insert and the select: the caller tries again
        return Delivery(UUID(int=0), None, "released", won=False)
    return Delivery(row["id"], row["run_id"], row["status"], won=False)


async def claim(org_id: UUID, workflow_id: UUID, source: Source, key: str) -> Delivery:
    async with org_transaction(org_id) as conn:
        return await claim_in(conn, org_id, workflow_id, source, key)


async def wait_for_run(org_id: UUID, delivery_id: UUID, timeout: float = WAIT_SECONDS) -> Delivery | None:
    """Poll a claimed delivery until its run is recorded; None when it was released (the claimer failed)."""
    deadline = time.monotonic() + timeout
    pause = 0.02
    while True:
        async with org_transaction(org_id) as conn:
            cur = await conn.execute("SELECT id, run_id, status FROM workflow_deliveries WHERE id = %s", [delivery_id])
            row = await cur.fetchone()
        if row is None:
            return None
        if row["status"] != "pending" or time.monotonic() > deadline:
            return Delivery(row["id"], row["run_id"], row["status"], won=False)
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.25)


async def complete(
    org_id: UUID, delivery_id: UUID, run_id: UUID, status: Literal["started", "skipped"], *, queued: bool = False
) -> None:
    """The delivery's run: started (or skipped), or `queued` behind the chat's active run (stored when it starts)."""
    column = "queued_run_id" if queued else "run_id"
    async with org_transaction(org_id) as conn:
        await conn.execute(
            f"UPDATE workflow_deliveries SET {column} = %s, status = %s WHERE id = %s", [run_id, status, delivery_id]
        )


async def release(org_id: UUID, delivery_id: UUID) -> None:
    """Give the key back (the run did not start): a retry of the same delivery may claim it again."""
    async with org_transaction(org_id) as conn:
        await conn.execute("DELETE FROM workflow_deliveries WHERE id = %s AND status = 'pending'", [delivery_id])


async def fail(org_id: UUID, delivery_id: UUID, error: dict[str, Any]) -> None:
    """Keep a failed schedule fire in the history (a fire time is never retried)."""
    async with org_transaction(org_id) as conn:
        await conn.execute(
            "UPDATE workflow_deliveries SET status = 'failed', error = %s WHERE id = %s", [jsonb(error), delivery_id]
        )


async def workflow_of_run(conn: Conn, run_id: UUID) -> UUID | None:
    """The workflow whose delivery started `run_id` (None until the trigger recorded the run, or for a chat run)."""
    cur = await conn.execute(
        "SELECT workflow_id FROM workflow_deliveries WHERE run_id = %s OR queued_run_id = %s LIMIT 1", [run_id, run_id]
    )
    row = await cur.fetchone()
    return UUID(str(row["workflow_id"])) if row else None
