"""A document's title is in the full-text index (migration 0050, issue 36 item 2): a question that names only the
document ("where is the vendor onboarding checklist?") finds its chunks through full text even where none of its
text says so, a title match ranks above the same words in passing, the search stays within the caller's org and
collections, and every passage keeps its classification and its author and trust labels."""

from __future__ import annotations

from typing import Any

import httpx

from personal_agent.knowledge import chunk_store
from personal_agent.knowledge.transaction import knowledge_transaction
from tests.auth import auth_headers
from tests.knowledge import upload_and_wait

CHECKLIST = "# Before the first invoice\n\nCollect the tax form and the bank letter, then ask procurement to approve.\n"
MENTION = (
    "# Travel\n\nTrain tickets over two hundred euros need the manager's approval. Receipts go to finance within a"
    " week, as the expense policy of the old handbook said; taxis are fine after ten at night.\n"
)
EXPENSES = "# Limits\n\nA hotel night costs at most one hundred and forty euros in a capital city.\n"
NO_VECTORS = "test:no-vectors"
"""A model no chunk was embedded by: the vector leg finds nothing, so every row comes from full text."""


async def _full_text(tenant: Any, query: str, collections: tuple[str, ...] = ("org",)) -> list[dict[str, Any]]:
    async with knowledge_transaction(tenant.org_id, tenant.user_id) as conn:
        return await chunk_store.hybrid_search(
            conn, query=query, vector=[1.0] * 256, model=NO_VECTORS, dim=256, collections=collections, k=10
        )


async def test_a_question_naming_only_a_documents_title_finds_its_chunks_through_full_text(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    a, b = make_tenant(roles=("org-admin",)), make_tenant()
    ha, hb = auth_headers(a, roles=("org-admin",)), auth_headers(b)  # an admin may classify above the default
    doc = await upload_and_wait(
        http,
        ha,
        a,
        "vendor-onboarding_checklist.md",
        "text/markdown",
        CHECKLIST.encode(),
        classification="confidential",
    )
    other = await upload_and_wait(http, hb, b, "vendor-onboarding-checklist.md", "text/markdown", CHECKLIST.encode())
    mine = await upload_and_wait(
        http, ha, a, "vendor onboarding checklist.md", "text/markdown", CHECKLIST.encode(), collection="personal"
    )

    rows = await _full_text(a, "where is the vendor onboarding checklist?")
    assert rows, "the title's words are in no chunk's text: only the indexed title can match"
    assert {str(r["document_id"]) for r in rows} == {doc["id"]}  # not the other org's, not the personal collection's
    assert all(r["vector_rank"] is None and r["text_rank"] is not None for r in rows)
    assert all(r["classification"] == "confidential" and r["collection"] == "org" for r in rows)
    assert all(str(r["author_id"]) == str(a.user_id) and r["trusted"] is False and r["web"] is False for r in rows)
    personal = await _full_text(a, "vendor onboarding checklist", ("personal",))
    assert {str(r["document_id"]) for r in personal} == {mine["id"]}
    assert {str(r["document_id"]) for r in await _full_text(b, "vendor onboarding checklist")} == {other["id"]}

    # Through the API, beside another org document, the same question finds it first, with its labels and citation.
    await upload_and_wait(http, ha, a, "travel.md", "text/markdown", MENTION.encode())
    asked = {"q": "where is the vendor onboarding checklist?", "collection": "org"}
    found = await http.get("/api/v1/knowledge/search", headers=ha, params=asked)
    assert found.status_code == 200, found.text
    first = found.json()["items"][0]
    assert (first["document_id"], first["classification"]) == (doc["id"], "confidential")
    assert first["citation"].startswith("vendor-onboarding_checklist.md, § Before the first invoice")
    theirs = await http.get("/api/v1/knowledge/search", headers=hb, params={"q": "vendor onboarding checklist"})
    assert [p["document_id"] for p in theirs.json()["items"]] == [other["id"]]


async def test_a_title_match_ranks_above_the_same_words_in_passing(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    passing = await upload_and_wait(http, headers, tenant, "travel.md", "text/markdown", MENTION.encode())
    titled = await upload_and_wait(http, headers, tenant, "expense-policy.md", "text/markdown", EXPENSES.encode())

    rows = await _full_text(tenant, "what does the expense policy say?")
    assert [str(r["document_id"]) for r in rows] == [titled["id"], passing["id"]]
    assert [r["text_rank"] for r in rows] == [1, 2]
