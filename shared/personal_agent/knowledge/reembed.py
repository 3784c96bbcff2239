"""Re-embed a document's chunks with the org's current model (queued when an org changes its model)."""

from __future__ import annotations

from uuid import UUID

from personal_agent.governance.tiers import ClassificationBlocked
from personal_agent.knowledge import chunk_store, store
from personal_agent.knowledge.chunking import document_title, embedding_text
from personal_agent.knowledge.metered_embedding import embed_document_chunks
from personal_agent.knowledge.model_choice import current_model
from personal_agent.knowledge.status_feed import announce_status
from personal_agent.knowledge.transaction import worker_transaction


async def reembed_document(org_id: UUID, document_id: UUID) -> str:
    """Embed the chunks another model made; a no-op for a document that is gone or already current."""
    async with worker_transaction(org_id) as conn:
        doc = await store.get_document(conn, document_id)
        if doc is None:
            return "unknown_document"
        try:
            model = await current_model(conn, doc["classification"])
        except ClassificationBlocked:
            return "blocked"  # the model was refused for this document when it was chosen; nothing is sent
        stale = await chunk_store.stale_chunks(conn, document_id, model.id)
    if not stale:
        if doc["status"] == "ready":
            await announce_status(doc, embedding_model=model.id)
        return "current"
    title = document_title(doc["filename"])
    texts = [embedding_text(title, section, text) for _, section, text in stale]  # as ingest embedded them
    vectors = await embed_document_chunks(model, texts, org_id, None, document_id, "reembed")
    async with worker_transaction(org_id) as conn:
        await chunk_store.set_embeddings(
            conn, list(zip([i for i, _, _ in stale], vectors, strict=True)), model.id, model.dim
        )
        current = await store.get_document(conn, document_id)
    if current is not None:
        await announce_status(current, embedding_model=model.id)
    return "reembedded"
