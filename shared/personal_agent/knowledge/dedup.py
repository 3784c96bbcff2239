"""Near-duplicate passages out of a result: the same text uploaded twice, a page repeated in two versions of a
handbook, a section quoted in full by another. Two passages are near-identical when their word 3-gram sets overlap
by `THRESHOLD` or more (Jaccard); the better-ranked one stays."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
THRESHOLD = 0.8
_WORD = re.compile(r"\w+")


def shingles(text: str, size: int = 3) -> frozenset[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    if len(words) < size:
        return frozenset({tuple(words)})
    return frozenset(tuple(words[i : i + size]) for i in range(len(words) - size + 1))


def near_identical(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]], threshold: float = THRESHOLD) -> bool:
    if not a or not b:
        return a == b
    return len(a & b) / len(a | b) >= threshold


def distinct(items: Sequence[T], text: Callable[[T], str], threshold: float = THRESHOLD) -> list[T]:
    """`items` in order, without any that is near-identical to one kept before it."""
    kept: list[T] = []
    seen: list[frozenset[tuple[str, ...]]] = []
    for item in items:
        grams = shingles(text(item))
        if any(near_identical(grams, other, threshold) for other in seen):
            continue
        kept.append(item)
        seen.append(grams)
    return kept
