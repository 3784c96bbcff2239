"""Which of a person's memories go into a run's instructions: all of them while they fit, else the
`MAX_RECALLED` most relevant to the new message (offline embeddings, cached on the rows), always within
`MAX_BLOCK_CHARS`."""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.memories import embedding, saving, store

log = logging.getLogger("personal_agent.memories")
MAX_RECALLED = 12
MAX_BLOCK_CHARS = 4000
HEADER = (
    "What you remember about this user (saved earlier with the `remember` tool; they can see, edit and delete "
    "these in Settings). Use them when they help; do not repeat them back unprompted:"
)


async def _ensure_embeddings(org_id: UUID, user_id: UUID, rows: list[dict[str, Any]]) -> None:
    """Embed the memories that have no embedding of the current model yet, and keep those on their rows."""
    missing = [r for r in rows if r["embedding"] is None or r["embedding_model"] != embedding.EMBEDDING_MODEL]
    if not missing:
        return
    vectors = await embedding.embed([r["text"] for r in missing])
    async with org_transaction(org_id) as conn:
        await store.as_user(conn, user_id)
        for row, vector in zip(missing, vectors, strict=True):
            await store.set_embedding(conn, row["id"], row["text"], vector, embedding.EMBEDDING_MODEL)
            row["embedding"] = vector


async def launch_tier(conn: Conn, user_id: UUID, floor: int, project_id: UUID | None = None) -> int:
    """At launch: the content tier the memories a run may recall bring into it (only memories whose tier every
    model of the run passes, `floor`, are ever recalled; in a project's chat, only the project's)."""
    await store.as_user(conn, user_id)
    return await store.recallable_tier(conn, user_id, floor, project_id)


async def recall(org_id: UUID, user_id: UUID, query: str, max_tier: int, project_id: UUID | None = None) -> list[str]:
    """The memory texts for a run whose new message is `query`, most relevant first: only memories of at most
    `max_tier` (the content tier the run launched with, which counted them), of the run's scope (`project_id`: its
    project's; None: those saved outside projects)."""
    async with org_transaction(org_id, user_id=user_id) as conn:  # as `store.as_user`, in the BEGIN's round trip
        rows = await store.with_embeddings(conn, user_id, saving.MAX_MEMORIES, max_tier, project_id)
    if len(rows) > MAX_RECALLED and query.strip():
        try:
            await _ensure_embeddings(org_id, user_id, rows)
            [wanted] = await embedding.embed([query[:4000]], query=True)
        except Exception:  # an embedder that cannot load must not fail the run: the most recent ones go instead
            log.exception("memories could not be ranked; recalling the most recent")
        else:
            rows.sort(key=lambda r: -embedding.similarity(wanted, r["embedding"]))
    chosen: list[str] = []
    size = 0
    for row in rows[:MAX_RECALLED]:
        size += len(row["text"]) + 3
        if size > MAX_BLOCK_CHARS:
            break
        chosen.append(row["text"])
    return chosen


def instructions_block(texts: list[str]) -> str | None:
    """The memories as a section of the run's instructions (None when there are none)."""
    if not texts:
        return None
    return "\n".join([HEADER, *(f"- {t}" for t in texts)])
