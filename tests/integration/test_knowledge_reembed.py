"""The org's embedding model: each chunk records its model and dimension, vector search compares only the current
model's vectors, choosing another model re-embeds every document in the background (a job per document on the
ingest queue), and a model whose provider tier is below a document's classification is refused."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest
from pydantic_ai.embeddings import TestEmbeddingModel

from personal_agent.knowledge import chunk_store
from personal_agent.knowledge.embedding_catalog import (
    OFFLINE_MODEL,
    EmbeddingModelInfo,
    register_embedding_model,
    unregister_embedding_model,
)
from personal_agent.knowledge.transaction import knowledge_transaction
from tests.auth import auth_headers
from tests.knowledge import upload_and_wait, wait_for_status

NEW = EmbeddingModelInfo("test:kb-embedder", "Test embedder", 256, 2)
REGULATED = EmbeddingModelInfo("test:kb-regulated", "Regulated-tier embedder", 256, 1)
TEXT = "# Runbook\n\nWhen the pager fires, acknowledge within five minutes and open an incident channel.\n"


@pytest.fixture
def extra_embedders() -> Iterator[None]:
    for info in (NEW, REGULATED):
        register_embedding_model(info, lambda: TestEmbeddingModel("kb", dimensions=256))
    yield
    for info in (NEW, REGULATED):
        unregister_embedding_model(info.id)


def _models(admin_url: str, document_id: str) -> set[tuple[str, int]]:
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute(
            "SELECT DISTINCT embedding_model, embedding_dim FROM knowledge_chunks WHERE document_id = %s", [document_id]
        )
        return {(r[0], r[1]) for r in rows}


@pytest.mark.usefixtures("extra_embedders")
async def test_changing_the_model_reembeds_in_the_background_and_search_never_mixes_models(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    doc = await upload_and_wait(http, headers, tenant, "runbook.md", "text/markdown", TEXT.encode())
    assert _models(admin_url, doc["id"]) == {(OFFLINE_MODEL, 256)}

    # Same dimension, another model: its query vector is never compared with the stored ones (text still matches).
    async with knowledge_transaction(tenant.org_id, tenant.user_id) as conn:
        rows = await chunk_store.hybrid_search(
            conn, query="pager", vector=[1.0] * 256, model=NEW.id, dim=256, collections=("org",), k=5
        )
    assert rows and all(r["vector_rank"] is None and r["text_rank"] == 1 for r in rows)

    changed = await http.put("/api/v1/knowledge/settings", headers=headers, json={"embedding_model": NEW.id})
    assert changed.status_code == 200, changed.text
    assert (changed.json()["embedding_model"], changed.json()["reembedding"]) == (NEW.id, 1)
    await asyncio.to_thread(wait_for_status, tenant.org_id, tenant.user_id, doc["id"], embedding_model=NEW.id)
    assert _models(admin_url, doc["id"]) == {(NEW.id, 256)}
    found = await http.get("/api/v1/knowledge/search", headers=headers, params={"q": "what to do when paged"})
    assert found.json()["embedding_model"] == NEW.id
    assert [p["document_id"] for p in found.json()["items"]] == [doc["id"]]


@pytest.mark.usefixtures("extra_embedders")
async def test_a_model_below_a_documents_classification_is_refused(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    await upload_and_wait(
        http, headers, tenant, "board.md", "text/markdown", TEXT.encode(), classification="restricted"
    )
    refused = await http.put("/api/v1/knowledge/settings", headers=headers, json={"embedding_model": REGULATED.id})
    assert (refused.status_code, refused.json()["code"]) == (403, "classification_blocked")
    shown = await http.get("/api/v1/knowledge/settings", headers=headers)
    assert shown.json()["embedding_model"] == OFFLINE_MODEL
    user = auth_headers(tenant)  # a plain member may not choose
    denied = await http.put("/api/v1/knowledge/settings", headers=user, json={"embedding_model": NEW.id})
    assert denied.status_code == 403
