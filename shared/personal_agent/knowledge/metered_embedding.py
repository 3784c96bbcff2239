"""Embeddings are metered (issue 28, item 9): every embedding request the platform pays for (a document's chunks
at ingest or re-embed, a search query; on the platform's OpenAI key or Bedrock) is a ledger row with no run, so it
counts against the user's, the org's and the platform's caps and reaches the operator's metering export.

The offline embedder runs in this process and costs nothing: it is recorded too, with its tokens at cost 0, as the
ledger records the offline demo model (a known price of nothing, which budgets count as free; NULL would mean
unknown and be charged at the conservative unpriced rate). Who pays: the uploader for ingest, the searcher for a
query, the org (no user) for a re-embed, which an admin's change of model caused."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from importlib.metadata import version
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.knowledge.embedders import embed_documents_counted
from personal_agent.knowledge.embedding_catalog import EmbeddingModelInfo
from personal_agent.metering.embedding_store import Purpose, record_embedding

MILLION = Decimal(1_000_000)


def embedding_cost(info: EmbeddingModelInfo, tokens: int) -> tuple[Decimal | None, str | None]:
    """USD for `tokens` input tokens and where the price came from; (None, None) when nobody can price it."""
    if info.usd_per_mtok is not None:
        return Decimal(str(info.usd_per_mtok)) * tokens / MILLION, f"catalog {info.id}"
    from genai_prices import Usage, calc_price

    provider, _, model = info.id.partition(":")
    try:
        calc = calc_price(Usage(input_tokens=tokens), model, provider_id={"bedrock": "aws"}.get(provider, provider))
    except (LookupError, ValueError):
        return None, None
    return Decimal(str(calc.total_price)), f"genai-prices {version('genai-prices')}"


async def record(
    org_id: UUID,
    user_id: UUID | None,
    info: EmbeddingModelInfo,
    tokens: int,
    purpose: Purpose,
    *,
    document_id: UUID | None = None,
    chat_id: UUID | None = None,
) -> None:
    """The ledger row of one embedding request (or one document's batches)."""
    provider, _, model = info.id.partition(":")
    async with org_transaction(org_id) as conn:
        await record_embedding(
            conn, org_id, user_id, model, provider, tokens, embedding_cost(info, tokens), purpose, document_id, chat_id
        )


async def embed_document_chunks(
    info: EmbeddingModelInfo,
    texts: Sequence[str],
    org_id: UUID,
    user_id: UUID | None,
    document_id: UUID,
    purpose: Purpose,
) -> list[list[float]]:
    """One vector per chunk text, recorded in the ledger against the org (and `user_id`, who pays)."""
    vectors, tokens = await embed_documents_counted(info, texts)
    if texts:
        await record(org_id, user_id, info, tokens, purpose, document_id=document_id)
    return vectors
