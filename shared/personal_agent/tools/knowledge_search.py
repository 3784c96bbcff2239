"""`search_knowledge`: the run's hybrid search over the org's documents, the user's own and the chat's files.
The passages' classifications go through the gate first (`knowledge/run_tier.py`): a restricted document's text
never reaches a model below its tier."""

from __future__ import annotations

from typing import Any

from pydantic_ai import ModelRetry, RunContext

from personal_agent.errors import InvalidInput
from personal_agent.knowledge.run_tier import gate_retrieved
from personal_agent.knowledge.search import search
from personal_agent.spec.run_deps import RunDeps


async def search_knowledge(ctx: RunContext[RunDeps], query: str, k: int = 6) -> list[dict[str, Any]]:
    """Search the knowledge base (the organisation's documents, the user's own and this chat's files) for passages
    about `query`; k is how many (1-20). Quote what you use and cite it by its `citation` (document, page or
    section, chunk id)."""
    spec = ctx.deps.spec
    try:
        result = await search(spec.org_id, spec.user_id, query, chat_id=spec.chat_id, k=max(1, min(k, 20)))
    except InvalidInput as exc:
        raise ModelRetry(exc.message) from exc
    gate_retrieved(spec, [p.classification for p in result.passages])  # raises ClassificationBlocked: the run fails
    return [
        {
            "citation": p.citation,
            "document": p.filename,
            "document_id": str(p.document_id),
            "page": p.page,
            "section": p.section,
            "chunk_id": str(p.chunk_id),
            "text": p.text,
        }
        for p in result.passages
    ]
