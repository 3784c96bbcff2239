"""Token-aware chunking: each section (a page or a heading's text) is cut into chunks of at most `target` tokens
at sentence boundaries, consecutive chunks sharing about `overlap` tokens; a chunk never crosses a page or a
heading, so its citation is exact. Tokens are counted by the caller's tokenizer."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from personal_agent.knowledge.parsing import Section, UnreadableDocument

TARGET_TOKENS = 512
"""bench/retrieval_eval.py, default stages, recall@5 on its tuning / held-out halves: 0.788 / 0.781 at 128 tokens,
0.848 / 0.875 at 256, 0.848 / 0.906 at 384, 0.909 / 0.906 at 512 (chosen on the tuning half; MRR@10 there 0.690 at
384, 0.614 at 512: longer passages hold the answer more often, less often first). Tokens are counted without the
tokenizer's padding: before, a sentence counted as the longest of its section and chunks held one or two."""
OVERLAP_TOKENS = 96
MAX_CHUNKS = 8000
"""The most chunks one document may have (ingest reads `PA_INGEST_MAX_CHUNKS`): ~4M tokens at 512 a chunk."""
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n\s*\n+")

CountTokens = Callable[[Sequence[str]], list[int]]
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


@dataclass(frozen=True)
class Chunk:
    text: str
    tokens: int
    page: int | None
    section: str | None


def split_sentences(text: str) -> list[str]:
    """The text's sentences (and paragraphs), whitespace collapsed, none empty."""
    return [s for s in (" ".join(part.split()) for part in _SENTENCE.split(text)) if s]


def _units(text: str, count: CountTokens, target: int) -> list[tuple[str, int]]:
    """Sentences with their token counts; a sentence longer than `target` is cut into runs of words."""
    sentences = split_sentences(text)
    units: list[tuple[str, int]] = []
    for sentence, tokens in zip(sentences, count(sentences) if sentences else [], strict=True):
        if tokens <= target:
            units.append((sentence, tokens))
            continue
        words = sentence.split()
        step = max(1, len(words) * target // (tokens + 1))
        pieces = [" ".join(words[i : i + step]) for i in range(0, len(words), step)]
        units += list(zip(pieces, count(pieces), strict=True))
    return units


def chunk_section(section: Section, count: CountTokens, target: int, overlap: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    window: list[tuple[str, int]] = []
    size = 0
    for unit in _units(section.text, count, target):
        if window and size + unit[1] > target:
            chunks.append(Chunk(" ".join(u[0] for u in window), size, section.page, section.heading))
            kept: list[tuple[str, int]] = []
            for previous in reversed(window):  # carry the tail over, up to `overlap` tokens
                if sum(u[1] for u in kept) + previous[1] > overlap:
                    break
                kept.insert(0, previous)
            while kept and sum(u[1] for u in kept) + unit[1] > target:  # the overlap never overfills a chunk
                kept.pop(0)
            window, size = kept, sum(u[1] for u in kept)
        window.append(unit)
        size += unit[1]
    if window:
        chunks.append(Chunk(" ".join(u[0] for u in window), size, section.page, section.heading))
    return chunks


def chunk_sections(
    sections: Sequence[Section],
    count: CountTokens,
    target: int = TARGET_TOKENS,
    overlap: int = OVERLAP_TOKENS,
    max_chunks: int = MAX_CHUNKS,
) -> list[Chunk]:
    """Every section's chunks, in document order; `too_large` (nothing indexed) past `max_chunks`, found as soon
    as the section that passes it is cut."""
    chunks: list[Chunk] = []
    for section in sections:
        chunks += chunk_section(section, count, target, overlap)
        if len(chunks) > max_chunks:
            raise UnreadableDocument("too_large", f"the document makes more than {max_chunks} chunks")
    return chunks


def document_title(filename: str) -> str:
    """A document's title for its chunks' context: the file name without its extension, separators as spaces."""
    return " ".join(_EXTENSION.sub("", filename).replace("_", " ").replace("-", " ").split())


def embedding_text(title: str | None, section: str | None, text: str) -> str:
    """What is embedded for a chunk: its document's title and section path, then its text (bench/retrieval_eval.py
    measured the context's gain). The stored and cited text stays the chunk's own; full text indexes the title and the
    section path too, weighted above the text (migration 0050, `chunk_store.TEXT_WEIGHTS`)."""
    context = [part for part in (title, section) if part]
    if len(context) == 2 and section and title and section.lower().startswith(title.lower()):
        context = [section]
    return f"{' › '.join(context)}\n\n{text}" if context else text
