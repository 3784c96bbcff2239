"""The embedder memories are ranked with: always the offline WordLlama model the knowledge base ships
(`knowledge/wordllama_model.py`), so a person's memories never leave the worker to be embedded. Loaded on first
use in the run worker (about a second), never in the API."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pydantic-ai: imported with the model, so the API function (which lacks it) may import this
    from personal_agent.knowledge.wordllama_model import WordLlamaEmbeddingModel

EMBEDDING_MODEL = "wordllama:l2_supercat_256"


@functools.cache
def _model() -> WordLlamaEmbeddingModel:
    from personal_agent.knowledge.wordllama_model import WordLlamaEmbeddingModel

    return WordLlamaEmbeddingModel("l2_supercat_256")


async def embed(texts: list[str], *, query: bool = False) -> list[list[float]]:
    """Unit-length embeddings of `texts` (cosine similarity is their dot product)."""
    if not texts:
        return []
    result = await _model().embed(texts, input_type="query" if query else "document")
    return [list(v) for v in result.embeddings]


def similarity(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=False))
