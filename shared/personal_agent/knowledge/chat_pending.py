"""A chat's files still being read: a question asked right after attaching a file ("what does it say?") must not
search before the file is indexed. `search_knowledge` waits, a bounded time, for the chat's recent uploads to be
ready (or failed), then says how many are still being read instead of answering as if they were not there."""

from __future__ import annotations

import asyncio
import time
from uuid import UUID

from personal_agent.knowledge.transaction import knowledge_transaction

# How long a search waits for the chat's files (the ingest of a page or two takes a second or so).
WAIT_SECONDS = 20.0
POLL_SECONDS = 0.25
# An upload older than this that never finished was abandoned: it is not waited for.
RECENT = "15 minutes"


async def pending_in_chat(org_id: UUID, user_id: UUID | None, chat_id: UUID) -> int:
    """How many of the chat's files, added recently, are not yet indexed (uploading or processing)."""
    async with knowledge_transaction(org_id, user_id) as conn:
        cur = await conn.execute(
            "SELECT count(*) AS n FROM knowledge_documents WHERE collection = %s"
            " AND status IN ('uploading', 'processing') AND created_at > now() - %s::interval",
            [f"chat:{chat_id}", RECENT],
        )
        row = await cur.fetchone()
    return int(row["n"]) if row else 0


async def wait_for_chat_files(org_id: UUID, user_id: UUID | None, chat_id: UUID, timeout: float | None = None) -> int:
    """Wait until none of the chat's recent files is being read, at most `timeout` seconds (`WAIT_SECONDS`); how
    many still are."""
    deadline = time.monotonic() + (WAIT_SECONDS if timeout is None else timeout)
    while (pending := await pending_in_chat(org_id, user_id, chat_id)) and time.monotonic() < deadline:
        await asyncio.sleep(POLL_SECONDS)  # the ingest runs elsewhere (a queue's function): its row is what we see
    return pending
