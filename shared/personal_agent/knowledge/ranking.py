"""What happens to the fused candidates before the best `k` are returned: near-duplicates out (`dedup.py`), then
the reranking stage (`rerank.py`) if the deployment has one. Each stage was measured by bench/retrieval_eval.py
before it became a default (the figures are in bench/PROFILE.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from personal_agent.knowledge import dedup
from personal_agent.knowledge.chunk_store import RRF_K, TEXT_WEIGHTS
from personal_agent.knowledge.rerank import Reranker, reranker

T = TypeVar("T")


@dataclass(frozen=True)
class Retrieval:
    """How a search ranks (the defaults are what the bench measured best)."""

    dedup: bool = True
    reranker: str | None = None
    """`auto`, `none`, `tokens` or a Bedrock rerank model id; None: the deployment's `PA_KNOWLEDGE_RERANKER`."""
    pool: int = 30
    """Fused candidates the stages see (at least `k`)."""
    every_word: bool = False
    """Full text as before: a chunk must hold every word of the query (`chunk_store.any_word`)."""
    text_weights: tuple[float, float, float, float] = TEXT_WEIGHTS
    """`ts_rank`'s weights of a full-text match in a chunk's text, -, section path, title (`chunk_store`)."""

    def chosen_reranker(self) -> Reranker | None:
        from personal_agent.settings import get_settings

        settings = get_settings()
        choice = self.reranker if self.reranker is not None else settings.knowledge_reranker
        return reranker(choice, settings.aws_region or "us-east-1")


async def refine(
    query: str, candidates: Sequence[T], k: int, retrieval: Retrieval, text: Callable[[T], str]
) -> list[T]:
    """The best `k` of `candidates` (in fused order): distinct, then reranked."""
    kept = dedup.distinct(candidates, text) if retrieval.dedup else list(candidates)
    ranker = retrieval.chosen_reranker()
    if ranker is not None and len(kept) > 1:
        signals = await ranker.signals(query, [text(c) for c in kept])
        # Each signal's order is fused with the first ranking by reciprocal rank: a reranker that disagrees moves a
        # passage, never alone decides (the bench measured both; see bench/PROFILE.md).
        fused = {i: 1.0 / (RRF_K + i) for i in range(len(kept))}
        for scores in signals:
            for rank, i in enumerate(sorted(range(len(kept)), key=lambda i: -scores[i])):
                fused[i] += 1.0 / (RRF_K + rank)
        kept = [kept[i] for i in sorted(fused, key=lambda i: (-fused[i], -signals[0][i]))]  # a tie: the reranker's
    return kept[:k]
