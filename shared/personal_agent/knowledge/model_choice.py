"""Which embedding model an org's chunks use: its choice (or the deployment's default), behind the classification
gate; changing it queues a re-embed of every document (the old vectors stay searchable by full text meanwhile,
and vector search never compares the two models' vectors)."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.governance.tiers import classification_tier, enforce_classification
from personal_agent.knowledge import jobs, settings_store, store
from personal_agent.knowledge.embedding_catalog import EmbeddingModelInfo, model_info
from personal_agent.knowledge.transaction import knowledge_transaction, worker_transaction
from personal_agent.settings import get_settings


async def org_model(conn: Conn) -> EmbeddingModelInfo:
    """The org's embedding model (the caller's transaction is the org's)."""
    return model_info(await settings_store.embedding_model(conn) or get_settings().embedding_model)


def check_tier(info: EmbeddingModelInfo, classification: str) -> None:
    """The classification gate for embedders: 403 `classification_blocked` when the text may not go there."""
    enforce_classification(classification_tier(classification), info.tier, info.id)


async def current_model(conn: Conn, classification: str) -> EmbeddingModelInfo:
    """The org's model, if a document of `classification` may be embedded by it."""
    info = await org_model(conn)
    check_tier(info, classification)
    return info


async def choose_model(org_id: UUID, model_id: str) -> tuple[EmbeddingModelInfo, int]:
    """Set the org's model; every ready document is queued for re-embedding. Refused (403) when one of the org's
    documents is classified above the model's tier. Returns the model and how many documents were queued."""
    info = model_info(model_id)
    async with worker_transaction(org_id) as conn:  # every owner's documents: their classifications all count
        for classification in await store.classifications(conn):
            check_tier(info, classification)
        previous = await org_model(conn)
        await settings_store.set_embedding_model(conn, org_id, info.id)
        queued = await store.ready_document_ids(conn) if previous.id != info.id else []
    if queued:  # after the commit: a job read before it would still see the old model and re-embed nothing
        await asyncio.to_thread(jobs.send_jobs, "reembed", org_id, queued)
    return info, len(queued)


async def describe(org_id: UUID) -> dict[str, Any]:
    """The org's model and the models this deployment offers."""
    from personal_agent.knowledge.embedding_catalog import available_models

    async with knowledge_transaction(org_id, None) as conn:
        info = await org_model(conn)
    return {"embedding_model": info.id, "available": [vars(m) for m in available_models()]}
