"""What recalling memories adds to a model request, printed (never asserted).

Measured without a database (the SQL is one indexed SELECT of at most 200 short rows): the offline embedder
(WordLlama, in-process) over a person's memories — paid once per memory, then cached on its row — and the
per-request part: embed the new message, rank every memory by cosine, format the instructions block. Baseline in
the same run: the block from the most recent memories with no ranking (what a person with at most 12 memories
gets). Figures are medians over RUNS repetitions.
Usage: `.venv/bin/python bench/memory_recall.py [runs] [memories]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from personal_agent.memories import embedding  # noqa: E402
from personal_agent.memories.recall import MAX_RECALLED, instructions_block  # noqa: E402

TOPICS = ["units", "travel", "food", "family", "music", "work", "sport", "books", "pets", "garden"]


def memories(count: int) -> list[str]:
    return [f"Note {i}: the user has a preference about {TOPICS[i % len(TOPICS)]} number {i}" for i in range(count)]


async def main(runs: int, count: int) -> None:
    texts = memories(count)
    t = time.perf_counter()
    await embedding.embed(["warm up the model"])
    load = time.perf_counter() - t
    embed_all, per_request, baseline = [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        vectors = await embedding.embed(texts)
        embed_all.append(time.perf_counter() - t)
        t = time.perf_counter()
        [query] = await embedding.embed(["Which units should the recipe use?"], query=True)
        ranked = sorted(zip(texts, vectors, strict=True), key=lambda p: -embedding.similarity(query, p[1]))
        instructions_block([text for text, _ in ranked[:MAX_RECALLED]])
        per_request.append(time.perf_counter() - t)
        t = time.perf_counter()
        instructions_block(texts[:MAX_RECALLED])
        baseline.append(time.perf_counter() - t)
    med = statistics.median
    print(f"memories: {count}, runs: {runs}")
    print(f"embedder load (once per worker process): {load * 1000:.0f} ms")
    print(f"embed all {count} memories (once, then cached on the rows): {med(embed_all) * 1000:.1f} ms")
    print(f"per model request, ranked recall: {med(per_request) * 1000:.2f} ms")
    print(f"per model request, most-recent baseline: {med(baseline) * 1000:.3f} ms")
    print(f"ranked / baseline: {med(per_request) / max(med(baseline), 1e-9):.0f}x")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    asyncio.run(main(args[0] if args else 20, args[1] if len(args) > 1 else 200))
