"""What may be remembered, in one place for the `remember` tool and the Settings API: one line of at most
`MAX_MEMORY_CHARS`, at most `MAX_MEMORIES` per person; the same text twice is one memory."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.errors import Conflict, InvalidInput
from personal_agent.memories import store

MAX_MEMORY_CHARS = 1000
MAX_MEMORIES = 200


def clean_text(text: str) -> str:
    """The memory's text, whitespace collapsed; 422 when it is empty or too long."""
    cleaned = " ".join(text.split())
    if not cleaned:
        raise InvalidInput("a memory needs some text", code="empty_memory")
    if len(cleaned) > MAX_MEMORY_CHARS:
        raise InvalidInput(
            f"a memory holds at most {MAX_MEMORY_CHARS} characters", code="memory_too_long", limit=MAX_MEMORY_CHARS
        )
    return cleaned


async def save(
    conn: Conn,
    org_id: UUID,
    user_id: UUID,
    text: str,
    source_run_id: UUID | None = None,
    content_tier: int = 0,
    project_id: UUID | None = None,
) -> tuple[dict[str, Any], bool]:
    """Save a memory for `user_id` in this (org) transaction: (its row, whether it is new). `content_tier`: the
    tier of the data it was saved from (a run's content tier); it is recalled only where that tier may go.
    `project_id`: saved in a project's chat, it is recalled only in that project's chats."""
    cleaned = clean_text(text)
    await store.as_user(conn, user_id)
    same = await store.find_same(conn, user_id, cleaned, project_id)
    if same is not None:
        if content_tier:
            await store.raise_tier(conn, same["id"], content_tier)
        return same, False
    if await store.count(conn, user_id) >= MAX_MEMORIES:
        raise Conflict(
            f"you have {MAX_MEMORIES} memories, the most kept: delete some in Settings first",
            code="memory_limit",
            limit=MAX_MEMORIES,
        )
    return await store.insert(conn, org_id, user_id, cleaned, source_run_id, content_tier, project_id), True
