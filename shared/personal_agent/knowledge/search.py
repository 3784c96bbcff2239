"""Hybrid search for people (the API) and for runs (`search_knowledge`): the org's embedding model embeds the
query, Postgres fuses the nearest chunks and the full-text matches (reciprocal rank), within the collections the
caller may search; each passage carries its citation (document, page or section, chunk id)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from personal_agent import otel_export
from personal_agent.errors import InvalidInput
from personal_agent.knowledge import chunk_store, metered_embedding
from personal_agent.knowledge.model_choice import org_model
from personal_agent.knowledge.query_embedding import MAX_QUERY_CHARS, query_vector
from personal_agent.knowledge.ranking import Retrieval, refine
from personal_agent.knowledge.search_filters import SearchFilters, search_scope
from personal_agent.knowledge.transaction import knowledge_transaction

MAX_K = 50


@dataclass(frozen=True)
class Passage:
    chunk_id: UUID
    document_id: UUID
    filename: str
    collection: str
    classification: str
    page: int | None
    section: str | None
    text: str
    score: float
    author_id: UUID | None = None
    trusted: bool = False
    """An org admin vouched for the document's text (migration 0024)."""
    web: bool = False
    """The document's text was fetched from the web by a source (migration 0030): untrusted for every reader."""

    @property
    def citation(self) -> str:
        where = f"p. {self.page}" if self.page else (f"§ {self.section}" if self.section else "")
        return f"{self.filename}{', ' + where if where else ''} [chunk {self.chunk_id}]"

    def as_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "document_id": self.document_id,
            "filename": self.filename,
            "collection": self.collection,
            "classification": self.classification,
            "page": self.page,
            "section": self.section,
            "text": self.text,
            "score": self.score,
            "citation": self.citation,
        }


@dataclass(frozen=True)
class SearchResult:
    passages: list[Passage]
    embedding_model: str


async def search(org_id: UUID, user_id: UUID | None, query: str, **scope: Any) -> SearchResult:
    """The `k` best passages the caller may see (`_search`), under a `retrieval` span when traces are on: how many
    passages came back and the embedding model, never the query or a passage."""
    if not otel_export.enabled():
        return await _search(org_id, user_id, query, **scope)
    with otel_export.span("retrieval", {"pa.retrieval.k": int(scope.get("k", 8))}) as span:
        found = await _search(org_id, user_id, query, **scope)
        if span is not None:
            span.set_attribute("pa.retrieval.passages", len(found.passages))
            span.set_attribute("gen_ai.request.model", found.embedding_model)
        return found


async def _search(
    org_id: UUID,
    user_id: UUID | None,
    query: str,
    *,
    collection: str | None = None,
    chat_id: UUID | None = None,
    k: int = 8,
    agent_collections: tuple[str, ...] | None = None,
    filters: SearchFilters | None = None,
    retrieval: Retrieval | None = None,
) -> SearchResult:
    """The `k` best passages the caller may see (`chat_id`: a run's chat, whose files are searched too;
    `agent_collections`: an agent's collections, searched instead of every one; `filters`: document, date, type;
    `retrieval`: the ranking stages, `ranking.Retrieval()` by default)."""
    retrieval = retrieval or Retrieval()
    query = " ".join(query.split())
    if not query or len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"q has 1 to {MAX_QUERY_CHARS} characters", code="invalid_query")
    if not 1 <= k <= MAX_K:
        raise InvalidInput(f"k is between 1 and {MAX_K}", code="invalid_k")
    narrow = (filters or SearchFilters()).sql()
    async with knowledge_transaction(org_id, user_id) as conn:
        collections = await search_scope(conn, user_id, collection, agent_collections, chat_id)
        model = await org_model(conn)
    vector, tokens = await query_vector(model, query)
    await metered_embedding.record(org_id, user_id, model, tokens, "query", chat_id=chat_id)
    async with knowledge_transaction(org_id, user_id) as conn:
        rows = await chunk_store.hybrid_search(
            conn,
            query=query,
            vector=vector,
            model=model.id,
            dim=model.dim,
            collections=collections,
            k=max(k, retrieval.pool),
            every_word=retrieval.every_word,
            text_weights=retrieval.text_weights,
            filters=narrow,
        )
    passages = [
        Passage(
            r["chunk_id"],
            r["document_id"],
            r["filename"],
            r["collection"],
            r["classification"],
            r["page"],
            r["section"],
            r["text"],
            float(r["score"]),
            r["author_id"],
            r["trusted"],
            r["web"],
        )
        for r in rows
    ]
    passages = await refine(query, passages, k, retrieval, _ranked_text)
    return SearchResult(passages, model.id)


def _ranked_text(passage: Passage) -> str:
    """What dedup and the reranker read: the passage with its section path."""
    return f"{passage.section}\n\n{passage.text}" if passage.section else passage.text
