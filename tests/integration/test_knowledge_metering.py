"""Embeddings are metered (issue 28, item 9): a document's ingest and a search query are ledger rows with no run
(kind `embedding`, the tokens, the cost: 0 for the offline embedder, as the ledger records the offline demo model),
they count against the caps, and the operator's metering export sums them per org and model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import psycopg
import pytest
from psycopg.rows import dict_row

from personal_agent.db import org_transaction, system_transaction
from personal_agent.governance.budgets import BudgetExceeded, check_launch_budget, set_budget, spend_by_budget
from personal_agent.knowledge import metered_embedding
from personal_agent.knowledge.embedding_catalog import OPENAI_SMALL, EmbeddingModelInfo
from personal_agent.metering import store as metering_store
from personal_agent.metering.periods import Period
from tests.auth import auth_headers
from tests.knowledge import upload_and_wait

TEXT = "# Pager duty\n\nWhen paged at night, acknowledge within five minutes and open an incident channel."


def _embedding_rows(admin_url: str, org_id: Any) -> list[dict[str, Any]]:
    with psycopg.connect(admin_url, row_factory=dict_row) as conn:
        return conn.execute(
            "SELECT user_id, run_id, model_name, provider, input_tokens, cost_usd, purpose, document_id"
            " FROM usage_records WHERE org_id = %s AND kind = 'embedding' ORDER BY id",
            [org_id],
        ).fetchall()


async def test_ingest_and_query_embeddings_are_ledger_rows_in_the_operators_export(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    doc = await upload_and_wait(http, headers, tenant, "pager.md", "text/markdown", TEXT.encode())
    assert doc["status"] == "ready"
    found = await http.get("/api/v1/knowledge/search", headers=headers, params={"q": "what to do when paged"})
    assert found.status_code == 200 and found.json()["items"]

    ingest, query = _embedding_rows(admin_url, tenant.org_id)
    assert (ingest["purpose"], str(ingest["document_id"]), ingest["user_id"]) == ("ingest", doc["id"], tenant.user_id)
    assert (query["purpose"], query["document_id"], query["user_id"]) == ("query", None, tenant.user_id)
    for row in (ingest, query):
        assert row["run_id"] is None and (row["provider"], row["model_name"]) == ("wordllama", "l2_supercat_256")
        assert row["input_tokens"] > 0 and row["cost_usd"] == 0  # free, and known to be: not NULL (unknown)

    now = datetime.now(UTC)
    async with system_transaction() as conn:
        exported = await metering_store.usage_by_org_and_model(
            conn, Period("hour", now - timedelta(hours=1), now + timedelta(minutes=1))
        )
    (line,) = [r for r in exported if r["org_id"] == tenant.org_id]
    assert (line["model_name"], line["requests"]) == ("l2_supercat_256", 2)
    assert line["input_tokens"] == ingest["input_tokens"] + query["input_tokens"]


async def test_a_priced_embedding_counts_against_the_caps(make_tenant: Any) -> None:
    tenant = make_tenant()
    priced = EmbeddingModelInfo("openai:test-embedding", "priced", 256, 1, usd_per_mtok=1000.0)
    await set_budget(tenant.org_id, "org", None, Decimal("2"))
    await metered_embedding.record(tenant.org_id, tenant.user_id, priced, 1500, "query")
    (cap,) = await spend_by_budget(tenant.org_id)
    assert cap["spent_usd"] == Decimal("1.5")
    async with org_transaction(tenant.org_id) as conn:
        await check_launch_budget(conn, tenant.user_id)  # still under the cap
    await metered_embedding.record(tenant.org_id, None, priced, 500, "reembed")
    with pytest.raises(BudgetExceeded):  # the next run is refused (429 budget_exceeded)
        async with org_transaction(tenant.org_id) as conn:
            await check_launch_budget(conn, tenant.user_id)
    assert metered_embedding.embedding_cost(OPENAI_SMALL, 1_000_000)[0] == Decimal("0.02")  # genai-prices
