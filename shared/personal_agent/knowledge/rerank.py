"""The reranking stage: one interface, `Reranker.signals(query, texts)`: one or more score lists over the texts,
higher is more relevant, each ranking the texts once in the fusion with the first ranking (`ranking.refine`). On
AWS, Bedrock's rerank models (Amazon Rerank 1.0, Cohere Rerank 3.5) through the `bedrock-agent-runtime` Rerank API
(one signal); where the offline embedder is installed, `TokenMatchReranker` (two signals from WordLlama's own
weights: late interaction over its token vectors, and the passage's best three-sentence window by embedding).
`reranker()` picks by `PA_KNOWLEDGE_RERANKER` (`auto`, `none`, `tokens`, or a Bedrock model id);
bench/retrieval_eval.py measures each against the fused ranking."""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import re
from collections.abc import Sequence
from typing import Any, Protocol

from personal_agent.aws_clients import aws_client

BEDROCK_MODELS = ("amazon.rerank-v1:0", "cohere.rerank-v3-5:0")
MAX_BEDROCK_SOURCES = 100
"""The Rerank API's limit of documents per request."""


class Reranker(Protocol):
    name: str

    async def signals(self, query: str, texts: Sequence[str]) -> list[list[float]]:
        """One or more lists of one relevance score per text, in order (each is one vote in the fusion)."""
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

    async def signals(self, query: str, texts: Sequence[str]) -> list[list[float]]:
        return [await self.scores(query, texts)]


class TokenMatchReranker:
    """Two signals from the offline embedder's weights (nothing more to ship), each a vote in the fusion:

    - late interaction over WordLlama's token vectors: for each of the query's tokens (its stop words left out:
      "how", "do", "I" match every passage), its best cosine with a passage token; the mean is the score;
    - the passage's best window of `WINDOW` consecutive sentences, each embedded with the passage's first line (its
      section path, as `search` passes it) by the embedder itself: a 384-token chunk averages several topics (six
      string methods, say), and the window that answers stands out where the whole chunk's mean does not.

    bench/retrieval_eval.py, tuned on its odd-numbered questions only: recall@5 0.727 -> 0.788 there, 0.719 -> 0.812
    on the held-out even ones (the token signal alone: 0.727 / 0.750)."""

    name = "tokens:wordllama"
    WINDOW = 3

    def _token_scores(self, query: str, texts: Sequence[str]) -> list[float]:
        import numpy as np

        model = _wordllama()
        matrix = model.embedding
        norms = np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9

        def vectors(text: str) -> Any:
            ids = sorted(set(model.tokenizer.encode(text, add_special_tokens=False).ids))
            return matrix[ids] / norms[ids] if ids else np.zeros((1, matrix.shape[1]), dtype=np.float32)

        asked = vectors(content_words(query) or query)
        return [float((asked @ vectors(text).T).max(axis=1).mean()) for text in texts]

    def _window_scores(self, query: str, texts: Sequence[str]) -> list[float]:
        model = _wordllama()
        windows = [passage_windows(text, self.WINDOW) for text in texts]
        flat = [w for ws in windows for w in ws]
        asked = model.embed([query], norm=True)[0]
        similarity = model.embed(flat, norm=True) @ asked if flat else []
        scores, at = [], 0
        for ws in windows:
            scores.append(float(max(similarity[at : at + len(ws)])) if ws else 0.0)
            at += len(ws)
        return scores

    def _signals(self, query: str, texts: Sequence[str]) -> list[list[float]]:
        return [self._token_scores(query, texts), self._window_scores(query, texts)]

    async def signals(self, query: str, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self._signals, query, texts)

    async def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """The token signal alone."""
        return await asyncio.to_thread(self._token_scores, query, texts)


STOP_WORDS = frozenset(
    "a an the of to in on for and or is are was were be been do does did how what which when why where who can "
    "could i my me you your it its this that these those with by from as at if into than then so not no only just "
    "any there their they we us our will would should shall may might must have has had about up out get gets use "
    "used using make want whether".split()
)
_WORD = re.compile(r"\w+")


def content_words(query: str) -> str:
    """The query without its stop words (the question's frame: "how do I", "what does")."""
    return " ".join(w for w in _WORD.findall(query) if w.lower() not in STOP_WORDS)


def passage_windows(text: str, size: int) -> list[str]:
    """Runs of `size` consecutive sentences (the whole passage when it has fewer), each after the passage's first
    line when that line stands alone as a paragraph (the section path `search` puts first)."""
    from personal_agent.knowledge.chunking import split_sentences

    head, sep, body = text.partition("\n\n")
    context = head.strip() if sep and "\n" not in head.strip() and len(head) <= 300 else ""
    sentences = split_sentences(body if context else text)
    runs = [" ".join(sentences[i : i + size]) for i in range(max(1, len(sentences) - size + 1))]
    return [f"{context}\n{run}" if context else run for run in runs if run] or [text]


def _wordllama() -> Any:
    from personal_agent.knowledge.wordllama_model import _wordllama as load

    return load()


@functools.cache
def reranker(choice: str, region: str = "us-east-1") -> Reranker | None:
    """The reranker a deployment chose (`none` or empty: the fused ranking stands; `auto`: `tokens` where WordLlama
    is installed, else none)."""
    if choice == "auto":  # the offline reranker where the embedder is installed (the API on AWS has it not)
        choice = "tokens" if importlib.util.find_spec("wordllama") is not None else "none"
    if choice in ("", "none"):
        return None
    if choice == "tokens":
        return TokenMatchReranker()
    if choice in BEDROCK_MODELS:
        return BedrockReranker(choice, region)
    raise ValueError(f"unknown reranker {choice!r}: auto, none, tokens or one of {', '.join(BEDROCK_MODELS)}")
