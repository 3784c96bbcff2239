"""Rows that name an object in the documents bucket, deleted in bounded batches: every version of each object first,
then the rows (a document's chunks go with it), so a row is never gone while its object stays behind. Used by the
retention sweep and by erasing a person's files."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.knowledge import objects

BATCH = 200
MAX_BATCHES = 20

Transaction = Callable[[UUID], AbstractAsyncContextManager[Conn]]


async def delete_with_objects(
    org_id: UUID,
    transaction: Transaction,
    due: Callable[[Conn], Awaitable[list[dict[str, Any]]]],
    delete: Callable[[Conn, list[Any]], Awaitable[int]],
    gone: set[str] | None = None,
    max_batches: int = MAX_BATCHES,
) -> int:
    """Until `due` (reading up to `BATCH` rows with `id` and `object_key`) comes back short: delete each row's object
    (once: `gone` holds the keys already deleted, shared by callers whose rows share objects), then the rows; how
    many rows went."""
    gone = set() if gone is None else gone
    deleted = 0
    for _ in range(max_batches):
        async with transaction(org_id) as conn:
            rows = await due(conn)
        for key in {row["object_key"] for row in rows} - gone:
            await asyncio.to_thread(objects.delete_every_version, key)
            gone.add(key)
        async with transaction(org_id) as conn:
            deleted += await delete(conn, [row["id"] for row in rows])
        if len(rows) < BATCH:
            break
    return deleted
