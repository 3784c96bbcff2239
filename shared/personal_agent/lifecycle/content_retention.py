"""Retention of what is not a chat row (issue 38), by the org's periods per classification (`org_data_policies`):
attachments (of a chat that is due, or older than their chat's classification's period), knowledge documents
(unchanged for longer than their own classification's period, or a due chat's files) and memories (unchanged for
longer than the period of the classification their tier is: 0 standard, 1 confidential, 2 restricted). Objects go
first, every version of them, then the rows (a document's chunks with it); so this runs before the chats' sweep,
which would otherwise drop the attachment rows with their chat and leave the objects behind. In bounded batches;
counts only. The usage ledger does not reference any of these and keeps its rows.

The sweep acts for every member: its transactions say `app.retention_sweep` (migration 0045) for memories and
attachments, and are the knowledge worker's for documents."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from uuid import UUID

from personal_agent.attachments import store as attachment_store
from personal_agent.chats import policy_store
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.knowledge import store as document_store
from personal_agent.knowledge.transaction import worker_transaction
from personal_agent.lifecycle.object_batches import BATCH, MAX_BATCHES, delete_with_objects
from personal_agent.memories import store as memory_store

TIERS = {"standard": 0, "confidential": 1, "restricted": 2}


@asynccontextmanager
async def sweep_transaction(org_id: UUID) -> AsyncIterator[Conn]:
    """The org's rows of every member (memories, attachments), for the sweep only."""
    async with org_transaction(org_id) as conn:
        await conn.execute("SELECT set_config('app.retention_sweep', 'on', true)")
        yield conn


async def periods(org_id: UUID, now: datetime) -> dict[str, datetime]:
    """Each classification with a period: the time before which its data expired."""
    async with org_transaction(org_id) as conn:
        policy = await policy_store.policy(conn, org_id)
    days = {
        "standard": policy.standard_days,
        "confidential": policy.confidential_days,
        "restricted": policy.restricted_days,
    }
    return {name: now - timedelta(days=n) for name, n in days.items() if n is not None}


async def expire_attachments(org_id: UUID, expired: dict[str, datetime], now: datetime) -> int:
    return await delete_with_objects(
        org_id,
        sweep_transaction,
        lambda conn: attachment_store.due_for_retention(conn, expired, now, BATCH),
        attachment_store.delete_ids,
    )


async def expire_documents(org_id: UUID, expired: dict[str, datetime], now: datetime) -> int:
    return await delete_with_objects(
        org_id,
        worker_transaction,
        lambda conn: document_store.due_for_retention(conn, expired, now, BATCH),
        document_store.delete_ids,
    )


async def expire_memories(org_id: UUID, expired: dict[str, datetime]) -> int:
    deleted = 0
    for classification, before in expired.items():
        for _ in range(MAX_BATCHES):
            async with sweep_transaction(org_id) as conn:
                gone = await memory_store.delete_expired(conn, TIERS[classification], before, BATCH)
            deleted += gone
            if gone < BATCH:
                break
    return deleted


async def sweep_org(org_id: UUID, now: datetime) -> dict[str, int]:
    """Delete the org's expired attachments, documents and memories (run before the chats' sweep); the counts,
    also recorded in `retention_runs` when there are any."""
    expired = await periods(org_id, now)
    counts = {
        "expired_attachments": await expire_attachments(org_id, expired, now),
        "expired_documents": await expire_documents(org_id, expired, now),
        "expired_memories": await expire_memories(org_id, expired),
    }
    if any(counts.values()):
        async with org_transaction(org_id) as conn:
            await policy_store.record_run(conn, org_id, 0, 0, **counts)
    return counts
