"""The offline embedder: WordLlama's 256-dimension weights ship inside its wheel, loaded from the package folder
with downloads disabled, as a pydantic-ai `EmbeddingModel` (so `Embedder` treats it like any provider's)."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

from pydantic_ai.embeddings import EmbeddingModel, EmbeddingResult, EmbeddingSettings
from pydantic_ai.embeddings.result import EmbedInputType
from pydantic_ai.usage import RequestUsage


@functools.cache
def _wordllama() -> Any:
    import wordllama  # type: ignore[import-untyped]
    from wordllama import WordLlama

    return WordLlama.load(cache_dir=os.path.dirname(wordllama.__file__), disable_download=True)


class WordLlamaEmbeddingModel(EmbeddingModel):
    """WordLlama `l2_supercat` at 256 dimensions, L2-normalised (cosine = dot product)."""

    def __init__(self, name: str = "l2_supercat_256", *, settings: EmbeddingSettings | None = None) -> None:
        super().__init__(settings=settings)
        self._name = name

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def system(self) -> str:
        return "wordllama"

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text by WordLlama's own tokenizer (what the chunker sizes chunks with). The tokenizer pads a
        batch to its longest text, so a text's tokens are its attention mask's, not its ids' (counting ids made every
        sentence of a section as long as its longest, and chunks of one or two sentences)."""
        encoded = _wordllama().tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [sum(e.attention_mask) for e in encoded]

    async def count_tokens(self, text: str) -> int:
        return self.count_tokens_batch([text])[0]

    async def max_input_tokens(self) -> int | None:
        return 512

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        texts, _ = self.prepare_embed(inputs, settings)
        vectors = _wordllama().embed(texts, norm=True) if texts else []
        return EmbeddingResult(
            embeddings=[[float(x) for x in v] for v in vectors],
            inputs=texts,
            input_type=input_type,
            usage=RequestUsage(input_tokens=sum(self.count_tokens_batch(texts)) if texts else 0),
            model_name=self._name,
            provider_name="wordllama",
        )
