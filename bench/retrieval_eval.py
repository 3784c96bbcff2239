"""Retrieval quality on real text nobody here wrote, printed per variant in one run (never asserted).

Corpus: CPython's own reference documentation as it ships in the standard library (`pydoc_data/topics.py`, the
text `help("if")` prints: 79 topics, ~465k characters). Each topic becomes one Markdown document (its underlined
headings made `#` headings, nothing else changed) and goes through the real parse, chunk, embed (the offline
WordLlama through pydantic-ai's `Embedder`) and store code into the embedded Postgres; searches go through
`knowledge.search.search` (query embedding, the hybrid SQL under RLS, then the ranking stages).

Labels: bench/retrieval_questions.jsonl, questions phrased as a person asks (paraphrases, not the text's words),
each with the passage that answers it as evidence phrases copied from the corpus; a retrieved passage answers when
its text holds one of them. Several topics repeat others (`compound` holds `if`, `while`, `try`...), as real
knowledge bases repeat themselves: that is what dedup is measured on. Follow-ups (`history`) measure query
rewriting: the router model's rewrite needs a model (not run here: printed as a path), the offline stand-in prefixes
the previous question.

The rows up to the 512-token one are as before migration 0050 (the document's title not in the full-text index, every
full-text match weighed alike); the next ones add the section path's weight, the title, and the weights chosen
(`chunk_store.TEXT_WEIGHTS`), so the change shows before and after in one run.

The direct questions are split in two halves: odd-numbered ids to choose ranking changes on, even-numbered ones
held out; each variant prints recall@5 and MRR@10 on both, so a change that only fits the tuning half shows.

Prints recall@1/@5/@10 and MRR@10 per variant, then search latency p50/p95 at 10k and 100k chunks (synthetic
padding, bench/knowledge.py's loader) with the default stages. Usage: `.venv/bin/python bench/retrieval_eval.py
[--no-latency | --aws-row]` (`--aws-row`: only the default org, its default row and the same without the
reranker, which is what AWS runs at template.yaml's default; no latency). With Bedrock Titan (AWS credentials, not
run here): `PA_BENCH_EMBEDDER=bedrock:amazon.titan-embed-text-v2:0 PA_ENV=aws .venv/bin/python
bench/retrieval_eval.py --no-latency`.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `bench.*`

from bench.streaming_support import percentile  # noqa: E402

QUESTIONS = Path(__file__).with_name("retrieval_questions.jsonl")
_UNDERLINE = {"*": "#", "=": "##", "-": "###", "~": "####"}


def corpus() -> dict[str, bytes]:
    """`{filename: markdown}`: every pydoc topic, underlined headings turned into `#` headings."""
    from pydoc_data.topics import topics

    docs: dict[str, bytes] = {}
    for key, text in topics.items():
        lines = text.splitlines()
        out: list[str] = []
        for i, line in enumerate(lines):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if line.strip() and nxt and len(nxt) == len(line) and set(nxt) <= set(_UNDERLINE) and len(set(nxt)) == 1:
                out.append(f"{_UNDERLINE[nxt[0]]} {line.strip()}")
            elif line and set(line) <= set(_UNDERLINE) and len(set(line)) == 1 and out and out[-1].startswith("#"):
                continue  # the underline of the heading just written
            else:
                out.append(line)
        docs[f"{key}.md"] = "\n".join(out).encode()
    return docs


def questions() -> list[dict[str, Any]]:
    return [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]


def _norm(text: str) -> str:
    return " ".join(text.split())


def answers(text: str, item: dict[str, Any]) -> bool:
    body = _norm(text)
    return any(_norm(e) in body for e in item["evidence"])


async def index(
    org_id: uuid.UUID,
    user_id: uuid.UUID,
    docs: dict[str, bytes],
    model: Any,
    *,
    context: bool,
    tokens: int,
    titled: bool = True,
) -> int:
    """Every document parsed, chunked (`tokens` a chunk at most), embedded and stored as ingest does (`context`:
    title and section path in what is embedded, as ingest does now; without: the chunk text alone, as before;
    `titled`: the title in the full-text index, as ingest does since migration 0050). Returns the chunk count."""
    from personal_agent.knowledge import chunk_store, store
    from personal_agent.knowledge.chunking import chunk_sections, document_title, embedding_text
    from personal_agent.knowledge.embedders import count_tokens, embed_documents
    from personal_agent.knowledge.parsing import parse
    from personal_agent.knowledge.transaction import worker_transaction

    total = 0
    for filename, data in docs.items():
        chunks = chunk_sections(parse("markdown", data), count_tokens, tokens, tokens * 3 // 16)
        title = document_title(filename)
        texts = [embedding_text(title, c.section, c.text) if context else c.text for c in chunks]
        vectors = await embed_documents(model, texts)
        rows = [
            chunk_store.NewChunk(i, c.text, c.tokens, c.page, c.section, v)
            for i, (c, v) in enumerate(zip(chunks, vectors, strict=True))
        ]
        async with worker_transaction(org_id) as conn:
            doc = await store.insert_document(
                conn,
                {
                    "id": uuid.uuid4(),
                    "org_id": org_id,
                    "created_by": user_id,
                    "owner_user_id": None,
                    "collection": "org",
                    "filename": filename,
                    "content_type": "text/markdown",
                    "size": len(data),
                    "classification": "standard",
                    "object_key": f"documents/{org_id}/{uuid.uuid4()}/{filename}",
                    "trusted": False,
                },
            )
            await chunk_store.replace_chunks(conn, doc, rows, model.id, model.dim, title=title if titled else None)
            await store.mark_ready(conn, doc["id"], "v1", None, len(rows))
        total += len(rows)
    return total


def half(item: dict[str, Any]) -> str:
    """The question's half: odd-numbered ids tune (ranking changes are chosen on them), even-numbered ones are
    held out (never looked at while tuning; a change that only fits the tuning half shows as a gap here)."""
    return "tune" if int("".join(c for c in item["id"] if c.isdigit())) % 2 else "held"


@dataclass
class Scores:
    ranks: list[int | None]
    latencies: list[float]
    halves: list[str]

    def part(self, name: str) -> Scores:
        picked = [i for i, h in enumerate(self.halves) if h == name]
        return Scores([self.ranks[i] for i in picked], [self.latencies[i] for i in picked], [name] * len(picked))

    def recall(self, at: int) -> float:
        return sum(1 for r in self.ranks if r is not None and r <= at) / len(self.ranks)

    def mrr(self) -> float:
        return sum(1 / r for r in self.ranks if r is not None and r <= 10) / len(self.ranks)


async def evaluate(org_id: uuid.UUID, user_id: uuid.UUID, items: list[dict[str, Any]], retrieval: Any) -> Scores:
    from personal_agent.knowledge.search import search

    ranks: list[int | None] = []
    latencies: list[float] = []
    for item in items:
        t = time.perf_counter()
        result = await search(org_id, user_id, item["query"], k=10, retrieval=retrieval)
        latencies.append(time.perf_counter() - t)
        found = [i for i, p in enumerate(result.passages, start=1) if answers(p.text, item)]
        ranks.append(found[0] if found else None)
    return Scores(ranks, latencies, [half(item) for item in items])


def offline_rewrite(item: dict[str, Any]) -> str:
    """The stand-in for the router's rewrite: the previous question, then the follow-up."""
    return " ".join([*item.get("history", []), item["question"]])


def row(name: str, scores: Scores) -> str:
    """All questions, then recall@5 and MRR@10 on each half (tune / held out) when both are there."""
    line = (
        f"  {name:<44}{scores.recall(1):>7.3f}{scores.recall(5):>7.3f}{scores.recall(10):>7.3f}{scores.mrr():>8.3f}"
        f"{statistics.median(scores.latencies) * 1000:>9.1f}"
    )
    tune, held = scores.part("tune"), scores.part("held")
    if tune.ranks and held.ranks:
        line += f"   {tune.recall(5):.3f} / {held.recall(5):.3f}   {tune.mrr():.3f} / {held.mrr():.3f}"
    return line


def AWS_ROW(org: uuid.UUID) -> tuple[str, uuid.UUID, Any]:  # noqa: N802 (a row, named as the constant it is)
    """What AWS runs at template.yaml's default `KnowledgeReranker: none`: the defaults without the reranker."""
    from personal_agent.knowledge.ranking import Retrieval

    return ("  same, no reranker (AWS default)", org, Retrieval(reranker="none"))


async def aws_quality(orgs: dict[str, uuid.UUID], user_id: uuid.UUID) -> list[str]:
    """`--aws-row`: only the default org, the default stages and the same without the reranker."""
    from personal_agent.knowledge.ranking import Retrieval

    direct = [dict(q, query=q["question"]) for q in questions() if not q.get("history")]
    header = (
        f"  {'variant':<44}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR@10':>8}{'p50 ms':>9}   R@5 tune/held   MRR tune/held"
    )
    await evaluate(orgs["default"], user_id, direct[:2], Retrieval())  # warm
    lines = [header, row("default stages (Retrieval())", await evaluate(orgs["default"], user_id, direct, Retrieval()))]
    name, org, retrieval = AWS_ROW(orgs["default"])
    return [*lines, row(name, await evaluate(org, user_id, direct, retrieval))]


async def quality(orgs: dict[str, uuid.UUID], user_id: uuid.UUID) -> list[str]:
    from personal_agent.knowledge.chunk_store import TEXT_WEIGHTS, UNWEIGHTED
    from personal_agent.knowledge.chunking import TARGET_TOKENS
    from personal_agent.knowledge.ranking import Retrieval

    items = questions()
    direct = [dict(q, query=q["question"]) for q in items if not q.get("history")]
    follow = [q for q in items if q.get("history")]
    # Every row up to the 512-token one is as before migration 0050: no title in full text, every match alike.
    plain: dict[str, Any] = {"dedup": False, "reranker": "none", "text_weights": UNWEIGHTED}
    staged: dict[str, Any] = {"dedup": True, "reranker": "tokens"}
    unweighted: dict[str, Any] = {"text_weights": UNWEIGHTED}
    pg_weights: dict[str, Any] = {"text_weights": (0.1, 0.2, 0.4, 1.0)}  # ts_rank's own weights of D, C, B, A
    variants = [
        ("baseline (as before: 256-token chunks, text", orgs["before"], Retrieval(every_word=True, **plain)),
        ("  only, every word in full text, fused)", None, None),
        ("+ full text matches any two words (ts_rank)", orgs["before"], Retrieval(**plain)),
        ("+ title and section path embedded", orgs["context"], Retrieval(**plain)),
        ("+ chunks of 384 tokens", orgs["c384"], Retrieval(**plain)),
        ("+ near-duplicate dedup", orgs["c384"], Retrieval(dedup=True, reranker="none", text_weights=UNWEIGHTED)),
        ("+ offline rerank: token match and best", orgs["c384"], Retrieval(**staged, text_weights=UNWEIGHTED)),
        ("  3-sentence window, each a vote (WordLlama)", None, None),
        (f"+ chunks of {TARGET_TOKENS} tokens (before 0050)", orgs["c512"], Retrieval(**staged, **unweighted)),
        ("+ section weighted B in ts_rank (no title)", orgs["c512"], Retrieval(**staged, text_weights=TEXT_WEIGHTS)),
        ("+ title in full text, unweighted", orgs["default"], Retrieval(**staged, text_weights=UNWEIGHTED)),
        ("+ title A, section B, text D, ts_rank's", orgs["default"], Retrieval(**staged, **pg_weights)),
        ("  default weights (1, 0.4, -, 0.1)", None, None),
        ("+ weights 0.4, 0.2, -, 0.1 (TEXT_WEIGHTS)", orgs["default"], Retrieval(**staged, text_weights=TEXT_WEIGHTS)),
        AWS_ROW(orgs["default"]),
    ]
    tuning = sum(1 for q in direct if half(q) == "tune")
    lines = [
        f"{len(direct)} questions (+ {len(follow)} follow-ups), answers = passages holding the evidence; halves: "
        f"{tuning} odd-numbered questions tune, {len(direct) - tuning} even-numbered are held out",
        f"  {'variant':<44}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR@10':>8}{'p50 ms':>9}   R@5 tune/held   MRR tune/held",
    ]
    await evaluate(orgs["default"], user_id, direct[:2], Retrieval())  # warm: pool, model, index pages
    for name, org, retrieval in variants:
        lines.append(row(name, await evaluate(org, user_id, direct, retrieval)) if org else f"  {name}")
    best = Retrieval()  # the defaults
    lines.append(row("default stages (Retrieval(), as above)", await evaluate(orgs["default"], user_id, direct, best)))
    lines.append(f"follow-ups ({len(follow)}), default stages:")
    raw = [dict(q, query=q["question"]) for q in follow]
    lines.append(row("follow-up as asked", await evaluate(orgs["default"], user_id, raw, best)))
    rewritten = [dict(q, query=offline_rewrite(q)) for q in follow]
    lines.append(row("+ previous question prefixed", await evaluate(orgs["default"], user_id, rewritten, best)))
    lines.append("  + router model rewrite: not run here (needs a model; PA_KNOWLEDGE_QUERY_REWRITE=1 on a deployment)")
    return lines


def answerable(docs: dict[str, bytes]) -> list[str]:
    """Whether every question's evidence survives chunking whole (a label split across chunks cannot be found)."""
    from personal_agent.knowledge.chunking import chunk_sections
    from personal_agent.knowledge.embedders import count_tokens
    from personal_agent.knowledge.parsing import parse

    texts = [c.text for data in docs.values() for c in chunk_sections(parse("markdown", data), count_tokens, 256)]
    missing = [q["id"] for q in questions() if not any(answers(t, q) for t in texts)]
    return [f"labels whose evidence no single chunk holds: {', '.join(missing) or 'none'}"]


async def latency(admin_url: str, user_id: uuid.UUID) -> list[str]:
    import psycopg

    from bench.knowledge import load_chunks, sentence
    from personal_agent.knowledge.search import search

    with psycopg.connect(admin_url, autocommit=True) as conn:
        org = conn.execute("INSERT INTO orgs (slug, name) VALUES ('pad', 'pad') RETURNING id").fetchone()
        assert org
        doc = conn.execute(
            "INSERT INTO knowledge_documents (org_id, created_by, collection, filename, content_type, size, "
            "object_key, status) VALUES (%s, %s, 'org', 'synthetic', 'text/plain', 1, 'documents/x', 'ready')"
            " RETURNING id",
            [org[0], user_id],
        ).fetchone()
        assert doc
    import random

    rng = random.Random(5)
    asked = [" ".join(sentence(rng).split()[:8]) for _ in range(100)]
    from personal_agent.knowledge.ranking import Retrieval

    variants = {"as before": Retrieval(every_word=True, dedup=False, reranker="none"), "default": Retrieval()}
    lines = []
    for start, count, size in ((0, 10_000, "10k"), (10_000, 90_000, "100k")):
        load_chunks(admin_url, org[0], doc[0], start, count)
        await search(org[0], user_id, asked[0])
        for name, retrieval in variants.items():
            samples = []
            for q in asked:
                t = time.perf_counter()
                await search(org[0], user_id, q, k=8, retrieval=retrieval)
                samples.append(time.perf_counter() - t)
            lines.append(
                f"search() at {size} chunks, {name} ({len(asked)} queries): p50 "
                f"{percentile(samples, 50) * 1000:.1f} ms, p95 {percentile(samples, 95) * 1000:.1f} ms"
            )
    return lines


async def run(with_latency: bool, aws_only: bool = False) -> None:
    import psycopg

    from personal_agent.knowledge.chunking import TARGET_TOKENS
    from personal_agent.knowledge.embedding_catalog import model_info
    from personal_agent.local.isolation import isolate_process
    from personal_agent.local.stack import LocalStack
    from personal_agent.settings import Settings, get_settings

    with tempfile.TemporaryDirectory(prefix="pa-bench-retrieval-") as tmp:
        isolate_process(Path(tmp), PA_ENV=os.environ.get("PA_ENV", "test"))
        stack = LocalStack(Settings()).start(with_aws=False)
        try:
            admin_url = os.environ["DATABASE_ADMIN_URL"]
            model_id = os.environ.get("PA_BENCH_EMBEDDER", get_settings().embedding_model)
            setups = {  # (title and section embedded, tokens a chunk, title in full text)
                "before": (False, 256, False),
                "context": (True, 256, False),
                "c384": (True, 384, False),
                "c512": (True, TARGET_TOKENS, False),
                "default": (True, TARGET_TOKENS, True),
            }
            if aws_only:
                setups = {"default": setups["default"]}
            with psycopg.connect(admin_url, autocommit=True) as conn:
                user = conn.execute("INSERT INTO users (issuer, subject) VALUES ('b', 'b') RETURNING id").fetchone()
                assert user
                user_id = user[0]
                orgs: dict[str, uuid.UUID] = {}
                for name in setups:
                    org = conn.execute("INSERT INTO orgs (slug, name) VALUES (%s, %s) RETURNING id", [name, name])
                    orgs[name] = org.fetchone()[0]  # type: ignore[index]
                    conn.execute(
                        "INSERT INTO knowledge_settings (org_id, embedding_model) VALUES (%s, %s)",
                        [orgs[name], model_id],
                    )
            model = model_info(model_id)
            docs = corpus()
            t = time.perf_counter()
            counts = {
                name: await index(orgs[name], user_id, docs, model, context=context, tokens=tokens, titled=titled)
                for name, (context, tokens, titled) in setups.items()
            }
            lines = [
                f"corpus: CPython {sys.version.split()[0]} pydoc_data/topics.py, {len(docs)} documents; chunks "
                + ", ".join(f"{n} {c}" for n, c in counts.items())
                + f" (indexed in {time.perf_counter() - t:.1f} s); embedder {model.id}",
                *answerable(docs),
                *await (aws_quality if aws_only else quality)(orgs, user_id),
            ]
            if with_latency:
                lines += await latency(admin_url, user_id)
            from personal_agent.db import close_pool

            await close_pool()
        finally:
            stack.stop()
    print("retrieval evaluation (embedded Postgres + pgvector, real ingest and search code)")
    for line in lines:
        print(line)
    print(
        "Bedrock Titan v2 (not run here): PA_BENCH_EMBEDDER=bedrock:amazon.titan-embed-text-v2:0 PA_ENV=aws with AWS "
        "credentials; PA_KNOWLEDGE_RERANKER=amazon.rerank-v1:0 adds Bedrock's reranker"
    )


def main() -> None:
    aws_only = "--aws-row" in sys.argv
    asyncio.run(run(with_latency="--no-latency" not in sys.argv and not aws_only, aws_only=aws_only))


if __name__ == "__main__":
    main()
