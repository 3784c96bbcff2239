"""Knowledge figures, printed (never asserted), on the embedded Postgres + pgvector of a stack of its own.

- Ingestion pages/s: a generated PDF (fpdf2) through what the ingest function does per document after reading
  the object: parse (pypdf), chunk (token-aware), embed (offline WordLlama through pydantic-ai's `Embedder`) and
  store (one transaction); S3 and SQS transfer are not in it. Per-stage shares printed too.
- Search p50/p95 at 10k and 100k chunks of one org: `knowledge.search.search` end to end (query embedding plus the
  hybrid SQL: HNSW kNN + full text fused by reciprocal rank, under RLS), and the hybrid SQL alone.
- HNSW recall@10 against an exact scan (index scans off) of the same org's chunks, for ef_search 40-400
  (target >= 0.95); the index is built with m 16, ef_construction 128 as migration 0015 builds it.

Chunks are two to four real sentences (the docstrings of the installed packages, seeded choice), embedded by
the same model; queries are the first eight words of a sentence.
Usage: `.venv/bin/python bench/knowledge.py [queries] [pages]` (defaults 200 queries, 60 pages).
"""

from __future__ import annotations

import asyncio
import functools
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `bench.*`, `tests.*`

from bench.streaming_support import percentile  # noqa: E402

_DOCSTRING = re.compile(r'"""(.*?)"""', re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PROSE = re.compile(r"^[A-Z][A-Za-z ,;:'()-]+[.]$")


@functools.cache
def corpus() -> list[str]:
    """Real English: the prose sentences of the docstrings of the installed packages (about 50k, deduplicated,
    in a fixed order), so word frequencies and embeddings behave as in real documents."""
    root = Path(sys.prefix) / "lib"
    seen: dict[str, None] = {}
    for path in sorted(root.rglob("site-packages/**/*.py")):
        try:
            text = path.read_text(errors="ignore")
        except OSError:
            continue
        for doc in _DOCSTRING.findall(text):
            for s in _SENTENCE_END.split(" ".join(doc.split())):
                if 8 <= s.count(" ") + 1 <= 40 and _PROSE.match(s):
                    seen.setdefault(s, None)
    return list(seen)


def sentence(rng: random.Random) -> str:
    return rng.choice(corpus())


def chunk_text(rng: random.Random) -> str:
    """A synthetic chunk: two to four real sentences (about 30-120 tokens)."""
    return " ".join(rng.sample(corpus(), rng.randint(2, 4)))


def pdf_pages(rng: random.Random, pages: int) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    for _ in range(pages):
        pdf.add_page()
        pdf.multi_cell(0, 5, " ".join(sentence(rng) for _ in range(18)))
    return bytes(pdf.output())


async def ingestion(org_id: uuid.UUID, user_id: uuid.UUID, pages: int) -> list[str]:
    from personal_agent.knowledge import chunk_store, store
    from personal_agent.knowledge.chunking import chunk_sections
    from personal_agent.knowledge.embedders import count_tokens, embed_documents
    from personal_agent.knowledge.embedding_catalog import OFFLINE
    from personal_agent.knowledge.parsing import parse
    from personal_agent.knowledge.transaction import worker_transaction

    data = pdf_pages(random.Random(7), pages)
    await embed_documents(OFFLINE, ["warm up"])  # the model loads once per process (cold start, not per page)
    stages: dict[str, float] = {}
    t0 = time.perf_counter()
    sections = parse("pdf", data)
    t1 = time.perf_counter()
    chunks = chunk_sections(sections, count_tokens)
    t2 = time.perf_counter()
    vectors = await embed_documents(OFFLINE, [c.text for c in chunks])
    t3 = time.perf_counter()
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
                "filename": "bench.pdf",
                "content_type": "application/pdf",
                "size": len(data),
                "classification": "standard",
                "object_key": f"documents/{org_id}/{uuid.uuid4()}/bench.pdf",
            },
        )
        await chunk_store.replace_chunks(conn, doc, rows, OFFLINE.id, OFFLINE.dim, title="bench")
    t4 = time.perf_counter()
    stages = {"parse": t1 - t0, "chunk": t2 - t1, "embed": t3 - t2, "store": t4 - t3}
    total = t4 - t0
    shares = ", ".join(f"{k} {v / total:.0%}" for k, v in stages.items())
    return [
        f"ingestion: {pages} pages, {len(chunks)} chunks, {len(data) / 1e6:.2f} MB in {total:.2f} s "
        f"-> {pages / total:.1f} pages/s ({shares})"
    ]


def load_chunks(admin_url: str, org_id: uuid.UUID, document_id: uuid.UUID, start: int, count: int) -> None:
    """`count` synthetic chunks embedded by the offline model, COPYed in (HNSW index dropped meanwhile)."""
    import psycopg

    from personal_agent.knowledge.chunk_store import vector_literal
    from personal_agent.knowledge.wordllama_model import _wordllama

    rng = random.Random(start)
    texts = [chunk_text(rng) for _ in range(count)]
    vectors = _wordllama().embed(texts, norm=True)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("DROP INDEX IF EXISTS knowledge_chunks_hnsw_256")
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY knowledge_chunks (org_id, document_id, collection, classification, seq, text, tokens, embedding, "
                "embedding_model, embedding_dim) FROM STDIN"
            ) as copy,
        ):
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
                copy.write_row(
                    (
                        org_id,
                        document_id,
                        "org",
                        "standard",
                        start + i,
                        text,
                        20,
                        vector_literal(vector),
                        "wordllama:l2_supercat_256",
                        256,
                    )
                )
        conn.execute("SET maintenance_work_mem = '512MB'")
        conn.execute(
            "CREATE INDEX knowledge_chunks_hnsw_256 ON knowledge_chunks "
            "USING hnsw ((embedding::vector(256)) vector_cosine_ops) WITH (m = 16, ef_construction = 128) "
            "WHERE embedding_dim = 256"
        )
        conn.execute("VACUUM ANALYZE knowledge_chunks")  # as autovacuum would: the GIN pending list merged


async def measure(org_id: uuid.UUID, user_id: uuid.UUID, queries: int, size: str) -> list[str]:
    from personal_agent.knowledge import chunk_store
    from personal_agent.knowledge.embedders import embed_query
    from personal_agent.knowledge.embedding_catalog import OFFLINE
    from personal_agent.knowledge.search import search
    from personal_agent.knowledge.transaction import knowledge_transaction

    rng = random.Random(99)
    asked = [" ".join(sentence(rng).split()[:8]) for _ in range(queries)]
    await search(org_id, user_id, asked[0])  # warm: pool, model, index pages
    full: list[float] = []
    sql: list[float] = []
    sweep = (40, 100, 200, chunk_store.EF_SEARCH)
    recalls: dict[int, list[float]] = {ef: [] for ef in sweep}
    for q in asked:
        t = time.perf_counter_ns()
        await search(org_id, user_id, q, k=8)
        full.append(time.perf_counter_ns() - t)
        vector = await embed_query(OFFLINE, q)
        async with knowledge_transaction(org_id, user_id) as conn:
            t = time.perf_counter_ns()
            await chunk_store.hybrid_search(
                conn, query=q, vector=vector, model=OFFLINE.id, dim=256, collections=("org",), k=8
            )
            sql.append(time.perf_counter_ns() - t)
        async with knowledge_transaction(org_id, user_id) as conn:
            exact = await chunk_store.nearest_ids(conn, vector, OFFLINE.id, 256, 10, exact=True)
        for ef in sweep:
            async with knowledge_transaction(org_id, user_id) as conn:
                approx = await chunk_store.nearest_ids(conn, vector, OFFLINE.id, 256, 10, exact=False, ef_search=ef)
            recalls[ef].append(len(set(approx) & set(exact)) / max(1, len(exact)))

    def fmt(samples: list[float]) -> str:
        return f"p50 {percentile(samples, 50) / 1e6:7.2f} ms  p95 {percentile(samples, 95) / 1e6:7.2f} ms"

    return [
        f"search at {size} chunks ({queries} queries): search() {fmt(full)} | hybrid SQL alone {fmt(sql)}",
        f"HNSW recall@10 vs exact scan at {size} (target >= 0.95; search uses ef_search {chunk_store.EF_SEARCH}): "
        + ", ".join(f"ef_search {ef}: {statistics.mean(r):.3f}" for ef, r in recalls.items()),
    ]


async def run(queries: int, pages: int) -> None:
    import psycopg

    from personal_agent.local.isolation import isolate_process
    from personal_agent.local.stack import LocalStack
    from personal_agent.settings import Settings

    with tempfile.TemporaryDirectory(prefix="pa-bench-kb-") as tmp:
        isolate_process(Path(tmp), PA_ENV="test")
        stack = LocalStack(Settings()).start(with_aws=False)
        try:
            import os

            admin_url = os.environ["DATABASE_ADMIN_URL"]
            with psycopg.connect(admin_url, autocommit=True) as conn:
                org = conn.execute("INSERT INTO orgs (slug, name) VALUES ('bench', 'bench') RETURNING id").fetchone()
                user = conn.execute(
                    "INSERT INTO users (issuer, subject) VALUES ('bench', 'bench') RETURNING id"
                ).fetchone()
                assert org and user
                org_id, user_id = org[0], user[0]
                doc = conn.execute(
                    "INSERT INTO knowledge_documents (org_id, created_by, collection, filename, content_type, size, "
                    "object_key, status) VALUES (%s, %s, 'org', 'synthetic', 'text/plain', 1, 'documents/x', 'ready')"
                    " RETURNING id",
                    [org_id, user_id],
                ).fetchone()
                assert doc
            lines = await ingestion(org_id, user_id, pages)
            with psycopg.connect(admin_url, autocommit=True) as conn:  # the bench org: only synthetic chunks
                conn.execute("DELETE FROM knowledge_chunks WHERE org_id = %s AND document_id <> %s", [org_id, doc[0]])
            t = time.perf_counter()
            load_chunks(admin_url, org_id, doc[0], 0, 10_000)
            lines.append(f"(loaded and indexed 10k chunks in {time.perf_counter() - t:.1f} s)")
            lines += await measure(org_id, user_id, queries, "10k")
            t = time.perf_counter()
            load_chunks(admin_url, org_id, doc[0], 10_000, 90_000)
            lines.append(f"(loaded 90k more and rebuilt the HNSW index in {time.perf_counter() - t:.1f} s)")
            lines += await measure(org_id, user_id, queries, "100k")
            from personal_agent.db import close_pool

            await close_pool()
        finally:
            stack.stop()
    print("knowledge (embedded Postgres + pgvector, offline WordLlama 256-d, one org)")
    for line in lines:
        print("  " + line)


def main() -> None:
    queries = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    pages = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    asyncio.run(run(queries, pages))


if __name__ == "__main__":
    main()
