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
    """Bedrock's Rerank API (tests/unit/test_knowledge_bedrock_rerank.py: a real client behind botocore's Stubber; no
    Bedrock here; docs/knowledge.md has its setup, template.yaml's `KnowledgeReranker` turns it on)."""

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

    bench/retrieval_eval.py, chosen on its odd-numbered questions only: recall@5 0.788 -> 0.848 there, 0.781 ->
    0.906 on the held-out even ones (384-token chunks); about 40 ms for 30 passages (each tokenized once, windows
    summed from per-sentence token sums)."""

    name = "tokens:wordllama"
    WINDOW = 3

    def _signals(self, query: str, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        matrix, unit = _token_vectors()
        asked = _token_ids([content_words(query) or query])[0]
        asked_unit = unit[sorted(set(asked))] if asked else np.zeros((1, unit.shape[1]), dtype=np.float32)
        whole = _token_ids([query])[0]  # the window signal reads the whole question, as the embedder embeds it
        query_vector = matrix[whole].mean(axis=0) if whole else np.zeros(unit.shape[1], dtype=np.float32)
        query_vector = query_vector / (np.linalg.norm(query_vector) + 1e-9)
        # Each passage's context line and sentences tokenized once, all passages in one batch.
        parts = [_context_and_sentences(text) for text in texts]
        flat = [piece for context, sentences in parts for piece in (context, *sentences)]
        encoded = iter(_token_ids(flat))
        tokens_signal, window_signal = [], []
        for _, sentences in parts:
            context_ids = next(encoded)
            sentence_ids = [next(encoded) for _ in sentences]
            ids = sorted({i for run in (context_ids, *sentence_ids) for i in run})
            tokens_signal.append(float((asked_unit @ unit[ids].T).max(axis=1).mean()) if ids else 0.0)
            window_signal.append(_best_window(matrix, query_vector, context_ids, sentence_ids, self.WINDOW))
        return [tokens_signal, window_signal]

    async def signals(self, query: str, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self._signals, query, texts)

    async def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """The token signal alone."""
        return (await self.signals(query, texts))[0]


def _best_window(matrix: Any, query: Any, context: list[int], sentences: list[list[int]], size: int) -> float:
    """The best cosine between the query and the mean token vector of `size` consecutive sentences with the
    context line (the embedder's mean pooling, summed per sentence once)."""
    import numpy as np

    dim = matrix.shape[1]
    sums = [matrix[ids].sum(axis=0) if ids else np.zeros(dim, dtype=np.float32) for ids in sentences] or [
        np.zeros(dim, dtype=np.float32)
    ]
    counts = [len(ids) for ids in sentences] or [0]
    base, base_count = (matrix[context].sum(axis=0), len(context)) if context else (np.zeros(dim), 0)
    best = 0.0
    for start in range(max(1, len(sums) - size + 1)):
        total = base + sum(sums[start : start + size])
        count = base_count + sum(counts[start : start + size])
        if count:
            best = max(best, float(total @ query / (np.linalg.norm(total) + 1e-9)))
    return best


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
    line when that line stands alone as a paragraph (the section path `search` puts first): the windows the
    reranker's second signal scores."""
    context, sentences = _context_and_sentences(text)
    runs = [" ".join(sentences[i : i + size]) for i in range(max(1, len(sentences) - size + 1))]
    return [f"{context}\n{run}" if context else run for run in runs if run] or [text]


def _context_and_sentences(text: str) -> tuple[str, list[str]]:
    from personal_agent.knowledge.chunking import split_sentences

    head, sep, body = text.partition("\n\n")
    context = head.strip() if sep and "\n" not in head.strip() and len(head) <= 300 else ""
    return context, split_sentences(body if context else text)


@functools.cache
def _token_vectors() -> tuple[Any, Any]:
    """WordLlama's token vectors, and the same at unit length."""
    import numpy as np

    from personal_agent.knowledge.wordllama_model import _wordllama

    matrix = _wordllama().embedding
    return matrix, matrix / (np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9)


@functools.cache
def _tokenizer() -> Any:
    """WordLlama's tokenizer without the padding its embedder turns on."""
    from tokenizers import Tokenizer

    from personal_agent.knowledge.wordllama_model import _wordllama

    tokenizer = Tokenizer.from_str(_wordllama().tokenizer.to_str())
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _token_ids(texts: Sequence[str]) -> list[list[int]]:
    vocabulary = _token_vectors()[0].shape[0]
    encoded = _tokenizer().encode_batch(list(texts), add_special_tokens=False) if texts else []
    return [[min(i, vocabulary - 1) for i in e.ids] for e in encoded]


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
