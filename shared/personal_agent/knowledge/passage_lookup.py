"""One passage by its chunk id, for the source of a citation: visible to the caller exactly as search results are
(the org by RLS, a personal or chat document only to its owner); anything else is 404."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.errors import NotFound
from personal_agent.knowledge import chunk_store
from personal_agent.knowledge.search import Passage
from personal_agent.knowledge.transaction import knowledge_transaction


async def get_passage(org_id: UUID, user_id: UUID, chunk_id: UUID) -> dict[str, Any]:
    """The chunk's text, document, page or section and citation; 404 `chunk_not_found` if the caller may not see it."""
    async with knowledge_transaction(org_id, user_id) as conn:
        row = await chunk_store.get_chunk(conn, chunk_id)
    if row is None:
        raise NotFound("passage not found", code="chunk_not_found")
    passage = Passage(
        row["chunk_id"],
        row["document_id"],
        row["filename"],
        row["collection"],
        row["classification"],
        row["page"],
        row["section"],
        row["text"],
        0.0,
    )
    out = passage.as_dict()
    del out["score"]
    return {**out, "seq": row["seq"]}
