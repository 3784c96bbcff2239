"""The ledger's embedding rows (migration 0024): one `usage_records` row per embedding request, with no run.
Budgets, the usage report and the operator's export read them with the model responses' rows."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal
from uuid import UUID

from personal_agent.db.pool import Conn

Purpose = Literal["ingest", "reembed", "query"]


async def record_embedding(
    conn: Conn,
    org_id: UUID,
    user_id: UUID | None,
    model_name: str,
    provider: str,
    input_tokens: int,
    cost: tuple[Decimal | None, str | None],
    purpose: Purpose,
    document_id: UUID | None = None,
    chat_id: UUID | None = None,
) -> None:
    """Append the row (in the caller's org transaction)."""
    cost_usd, price_version = cost
    await conn.execute(
        "INSERT INTO usage_records (org_id, user_id, chat_id, model_name, provider, input_tokens, cost_usd,"
        " price_version, kind, purpose, document_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 'embedding', %s, %s)",
        [org_id, user_id, chat_id, model_name, provider, input_tokens, cost_usd, price_version, purpose, document_id],
    )
