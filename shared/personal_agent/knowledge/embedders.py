"""Embedding through pydantic-ai's `Embedder`: the org's model (the offline WordLlama, OpenAI with the platform
key, Bedrock in the account), built once per process, behind the classification gate: a document's text goes
only to an embedder whose provider tier its classification allows."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from personal_agent.governance.tiers import classification_tier, enforce_classification
from personal_agent.knowledge.embedding_catalog import OFFLINE_MODEL, EmbeddingModelInfo, registered_embedder

if TYPE_CHECKING:
    from pydantic_ai.embeddings import Embedder

BATCH = 64
"""Texts per embedding request (OpenAI takes up to 2048, Bedrock Titan one at a time; pydantic-ai splits)."""


def embedder(model_id: str) -> Embedder:
    """The `Embedder` of a catalog model id (built once per process)."""
    from pydantic_ai.embeddings import Embedder

    factory = registered_embedder(model_id)
    if factory is not None:
        return Embedder(factory())
    return _catalog_embedder(model_id)


@functools.cache
def _catalog_embedder(model_id: str) -> Embedder:
    from pydantic_ai.embeddings import Embedder

    if model_id == OFFLINE_MODEL:
        from personal_agent.knowledge.wordllama_model import WordLlamaEmbeddingModel

        return Embedder(WordLlamaEmbeddingModel())
    from personal_agent.secret_env import ensure_secrets_loaded

    ensure_secrets_loaded()  # the platform's OpenAI key comes from Secrets Manager on AWS
    return Embedder(model_id)


def count_tokens(texts: Sequence[str]) -> list[int]:
    """Tokens per text, by the offline model's tokenizer: chunks are sized with it whatever the org's model
    (every model in the catalog takes at least 512 tokens, and chunks stay well under)."""
    from personal_agent.knowledge.wordllama_model import WordLlamaEmbeddingModel

    return WordLlamaEmbeddingModel().count_tokens_batch(texts)


def check_tier(info: EmbeddingModelInfo, classification: str) -> None:
    """The classification gate for embedders (403 `classification_blocked`)."""
    enforce_classification(classification_tier(classification), info.tier, info.id)


async def embed_documents(info: EmbeddingModelInfo, texts: Sequence[str]) -> list[list[float]]:
    """One vector per text, in order."""
    return (await embed_documents_counted(info, texts))[0]


async def embed_documents_counted(info: EmbeddingModelInfo, texts: Sequence[str]) -> tuple[list[list[float]], int]:
    """One vector per text, in order, and the input tokens the provider counted (what the ledger records)."""
    vectors: list[list[float]] = []
    tokens = 0
    for start in range(0, len(texts), BATCH):
        result = await embedder(info.id).embed_documents(list(texts[start : start + BATCH]))
        vectors += [list(map(float, v)) for v in result.embeddings]
        tokens += result.usage.input_tokens
    _check_dim(info, vectors)
    return vectors, tokens


async def embed_query(info: EmbeddingModelInfo, text: str) -> list[float]:
    return (await embed_query_counted(info, text))[0]


async def embed_query_counted(info: EmbeddingModelInfo, text: str) -> tuple[list[float], int]:
    result = await embedder(info.id).embed_query(text)
    vectors = [list(map(float, result.embeddings[0]))]
    _check_dim(info, vectors)
    return vectors[0], result.usage.input_tokens


def _check_dim(info: EmbeddingModelInfo, vectors: list[list[float]]) -> None:
    if any(len(v) != info.dim for v in vectors):
        raise ValueError(f"{info.id} returned vectors of another dimension than {info.dim}")
