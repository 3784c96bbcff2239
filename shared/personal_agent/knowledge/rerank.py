"""The reranking stage: one interface, `Reranker.scores(query, texts)`, higher is more relevant. On AWS, Bedrock's
rerank models (Amazon Rerank 1.0, Cohere Rerank 3.5) through the `bedrock-agent-runtime` Rerank API; where the
offline embedder is installed, `TokenMatchReranker` (late interaction over WordLlama's own token vectors: each query
token's best match in the passage, averaged, as ColBERT scores). `reranker()` picks by `PA_KNOWLEDGE_RERANKER`
(`none`, `tokens`, or a Bedrock model id); bench/retrieval_eval.py measures each against the fused ranking."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from typing import Any, Protocol

from personal_agent.aws_clients import aws_client

BEDROCK_MODELS = ("amazon.rerank-v1:0", "cohere.rerank-v3-5:0")
MAX_BEDROCK_SOURCES = 100
"""The Rerank API's limit of documents per request."""


class Reranker(Protocol):
    name: str

    async def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, in order."""
        ...


class BedrockReranker:
    """Bedrock's Rerank API (not run by the tests: no Bedrock here; docs/knowledge.md has its setup)."""

    def __init__(self, model_id: str, region: str) -> None:
        self.name = f"bedrock:{model_id}"
        self.model_arn = f"arn:aws:bedrock:{region}::foundation-model/{model_id}"

    def request(self, query: str, texts: Sequence[str]) -> dict[str, Any]:
        sources = [
            {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}}}
            for t in texts[:MAX_BEDROCK_SOURCES]
        ]
        configuration = {"numberOfResults": len(sources), "modelConfiguration": {"modelArn": self.model_arn}}
        return {
            "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
            "sources": sources,
            "rerankingConfiguration": {
                "type": "BEDROCK_RERANKING_MODEL",
                "bedrockRerankingConfiguration": configuration,
            },
        }

    async def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        response = await asyncio.to_thread(aws_client("bedrock-agent-runtime").rerank, **self.request(query, texts))
        found = [0.0] * len(texts)
        for result in response.get("results", []):
            found[int(result["index"])] = float(result["relevanceScore"])
        return found


class TokenMatchReranker:
    """Late interaction over the offline embedder's token vectors: for each query token, its best cosine with a
    passage token; the mean of those is the score. Same weights as the embedder (nothing more to ship)."""

    name = "tokens:wordllama"

    def _scores(self, query: str, texts: Sequence[str]) -> list[float]:
        import numpy as np

        from personal_agent.knowledge.wordllama_model import _wordllama

        model = _wordllama()
        matrix = model.embedding
        norms = np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9

        def vectors(text: str) -> Any:
            ids = sorted(set(model.tokenizer.encode(text, add_special_tokens=False).ids))
            return matrix[ids] / norms[ids] if ids else np.zeros((1, matrix.shape[1]), dtype=np.float32)

        asked = vectors(query)
        return [float((asked @ vectors(text).T).max(axis=1).mean()) for text in texts]

    async def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        return await asyncio.to_thread(self._scores, query, texts)


@functools.cache
def reranker(choice: str, region: str = "us-east-1") -> Reranker | None:
    """The reranker a deployment chose (`none` or empty: the fused ranking stands)."""
    if choice in ("", "none"):
        return None
    if choice == "tokens":
        return TokenMatchReranker()
    if choice in BEDROCK_MODELS:
        return BedrockReranker(choice, region)
    raise ValueError(f"unknown reranker {choice!r}: none, tokens or one of {', '.join(BEDROCK_MODELS)}")
