"""The SQL of `knowledge_chunks`: replace a document's chunks at once, re-embed them, and the hybrid search
(vector kNN on the model's HNSW index + full text, fused by reciprocal rank). Every vector query names the
embedding model and dimension, so vectors of different models are never compared."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

INDEXED_DIMENSIONS = (256, 1024, 1536)
"""The dimensions with a partial HNSW index (migration 0015)."""
EF_SEARCH = 400
"""HNSW candidate list per query (pgvector's default is 40). bench/knowledge.py's sweep at 100k chunks: recall@10
against an exact scan 0.86 at 40, 0.92 at 100, 0.947 at 200, 0.97 at 400 (the SQL stays around 10 ms)."""
RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al.): a chunk scores sum(1 / (RRF_K + rank)) over both lists."""
TEXT_WEIGHTS = (0.1, 0.1, 0.2, 0.4)
"""`ts_rank`'s weights of a match in the chunk's text (D), -, its section path (B) and its document's title (A)
(migration 0050); `UNWEIGHTED` ranks every match alike, as before the title was indexed. bench/retrieval_eval.py,
chosen on its tuning half over three indexings: recall@5 there 0.879 unweighted and at Postgres' default weights
(0.1, 0.2, 0.4, 1.0), 0.909 at these (MRR@10 0.661 -> 0.671); held out 0.906 at all three."""
UNWEIGHTED = (0.1, 0.1, 0.1, 0.1)


@dataclass(frozen=True)
class NewChunk:
    seq: int
    text: str
    tokens: int
    page: int | None
    section: str | None
    embedding: Sequence[float]


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form, cast with `::vector` in SQL (no adapter registration needed)."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


_OPERATOR = re.compile(r'"|(^|\s)-\w|\sor\s', re.IGNORECASE)


MAX_PAIR_WORDS = 12
"""The query's distinct stemmed words (in `to_tsvector`'s order) that form pairs: 66 pairs at most."""


def any_word(query: str) -> bool:
    """Whether the full-text leg matches chunks holding any two of the query's words (ranked by `ts_rank`: how
    often and how rare). A question asked in words ("how do I strip the right end of a string?") rarely has every
    word in one passage: bench/retrieval_eval.py found every-word matching answers 15% of its questions within 40
    candidates, any two words 91% (any one word as many, but it ranks ten times the rows at 100k chunks). A query
    written with web-search operators (quotes, OR, -word) keeps their meaning."""
    return _OPERATOR.search(query) is None


async def word_pairs(conn: Conn, query: str) -> str | None:
    """The tsquery text `('a' & 'b') | ('a' & 'c') | ...` over the query's stemmed words (the one word when it has
    one; None when it has none)."""
    cur = await conn.execute("SELECT tsvector_to_array(to_tsvector('english', %s)) AS words", [query])
    row = await cur.fetchone()
    words = [w.replace("\\", "\\\\").replace("'", "''") for w in (row["words"] if row else [])][:MAX_PAIR_WORDS]
    if len(words) < 2:
        return f"'{words[0]}'" if words else None
    return " | ".join(f"('{a}' & '{b}')" for i, a in enumerate(words) for b in words[i + 1 :])


def _dim_sql(dim: int) -> str:
    if dim not in INDEXED_DIMENSIONS:
        raise ValueError(f"no HNSW index for {dim}-dimension vectors (migration 0015 indexes {INDEXED_DIMENSIONS})")
    return str(dim)


async def replace_chunks(
    conn: Conn, document: dict[str, Any], chunks: Sequence[NewChunk], model: str, dim: int, *, title: str | None
) -> None:
    """The document's chunks become exactly `chunks` (in the caller's transaction: all or nothing); `title`: the
    document's (`chunking.document_title`), indexed in full text with weight A."""
    await conn.execute("DELETE FROM knowledge_chunks WHERE document_id = %s", [document["id"]])
    if not chunks:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            """INSERT INTO knowledge_chunks (org_id, document_id, owner_user_id, collection, classification, seq,
                   page, section, title, text, tokens, embedding, embedding_model, embedding_dim)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::vector, %s, %s)""",
            [
                (
                    document["org_id"],
                    document["id"],
                    document["owner_user_id"],
                    document["collection"],
                    document["classification"],
                    c.seq,
                    c.page,
                    c.section,
                    title,
                    c.text,
                    c.tokens,
                    vector_literal(c.embedding),
                    model,
                    dim,
                )
                for c in chunks
            ],
        )


async def delete_chunks(conn: Conn, document_id: UUID) -> None:
    await conn.execute("DELETE FROM knowledge_chunks WHERE document_id = %s", [document_id])


async def stale_chunks(conn: Conn, document_id: UUID, model: str) -> list[tuple[UUID, str | None, str]]:
    """The document's chunks embedded by another model than `model`: (id, section, text)."""
    cur = await conn.execute(
        """SELECT id, section, text FROM knowledge_chunks WHERE document_id = %s AND embedding_model <> %s
           ORDER BY seq""",
        [document_id, model],
    )
    return [(r["id"], r["section"], r["text"]) for r in await cur.fetchall()]


async def set_embeddings(conn: Conn, vectors: Sequence[tuple[UUID, Sequence[float]]], model: str, dim: int) -> None:
    async with conn.cursor() as cur:
        await cur.executemany(
            """UPDATE knowledge_chunks SET embedding = %s::vector, embedding_model = %s, embedding_dim = %s
               WHERE id = %s""",
            [(vector_literal(v), model, dim, chunk_id) for chunk_id, v in vectors],
        )


def _hybrid_sql(d: str, narrow: str) -> str:
    """The fused query over `d`-dimension vectors; `narrow`: an ` AND …` condition on a chunk's document."""
    return f"""
        WITH vec AS (
            SELECT id, row_number() OVER (ORDER BY distance) AS rank FROM (
                SELECT id, embedding::vector({d}) <=> %(vector)s::vector({d}) AS distance
                FROM knowledge_chunks
                WHERE embedding_dim = {d} AND embedding_model = %(model)s AND collection = ANY(%(collections)s){narrow}
                ORDER BY embedding::vector({d}) <=> %(vector)s::vector({d})
                LIMIT %(candidates)s
            ) nearest
        ), txt AS (
            SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank FROM (
                SELECT id, CASE WHEN %(any_word)s THEN ts_rank(%(weights)s::float4[], tsv, q)
                    ELSE ts_rank_cd(%(weights)s::float4[], tsv, q) END AS score
                FROM knowledge_chunks, (SELECT CASE WHEN %(any_word)s THEN %(pairs)s::tsquery
                    ELSE websearch_to_tsquery('english', %(query)s) END AS q) tsq
                WHERE tsv @@ q AND collection = ANY(%(collections)s){narrow}
                ORDER BY score DESC
                LIMIT %(candidates)s
            ) matches
        ), fused AS (
            SELECT id, sum(1.0 / ({RRF_K} + rank)) AS score, min(source) AS source
            FROM (SELECT id, rank, 'vector' AS source FROM vec UNION ALL SELECT id, rank, 'text' FROM txt) ranked
            GROUP BY id
        )
        SELECT c.id AS chunk_id, c.document_id, d.filename, c.collection, c.classification, c.page, c.section,
               c.text, c.embedding_model, f.score, d.created_by AS author_id, d.trusted, d.web,
               (SELECT rank FROM vec WHERE vec.id = c.id) AS vector_rank,
               (SELECT rank FROM txt WHERE txt.id = c.id) AS text_rank
        FROM fused f JOIN knowledge_chunks c ON c.id = f.id JOIN knowledge_documents d ON d.id = c.document_id
        ORDER BY f.score DESC, c.id
        LIMIT %(k)s"""


async def hybrid_search(
    conn: Conn,
    *,
    query: str,
    vector: Sequence[float],
    model: str,
    dim: int,
    collections: tuple[str, ...],
    k: int,
    candidates: int = 40,
    exact: bool = False,
    filters: tuple[str, dict[str, Any]] = ("", {}),
    every_word: bool = False,
    text_weights: Sequence[float] = TEXT_WEIGHTS,
) -> list[dict[str, Any]]:
    """The best `k` chunks by reciprocal rank fusion of the `candidates` nearest (cosine, HNSW unless `exact`)
    and the `candidates` best full-text matches (`websearch_to_tsquery`: quoted phrases, OR, -word); `filters`: an
    ` AND …` condition on the chunk's document and its parameters (`search_filters.SearchFilters.sql`);
    `every_word`: full text as before `any_word` (every word must match; the bench's baseline); `text_weights`:
    `ts_rank`'s weights of a match in the text, -, the section path and the title (`TEXT_WEIGHTS`)."""
    d = _dim_sql(dim)
    narrow, narrow_params = filters
    # Iterative scans keep the HNSW walk going until enough rows pass the collection filter (pgvector >= 0.8).
    await conn.execute(f"SET LOCAL hnsw.ef_search = {int(EF_SEARCH)}")
    await conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
    if exact:
        await conn.execute("SET LOCAL enable_indexscan = off")
        await conn.execute("SET LOCAL enable_bitmapscan = off")
    sql = _hybrid_sql(d, narrow)
    pairs = None if every_word or not any_word(query) else await word_pairs(conn, query)
    params = {
        "vector": vector_literal(vector),
        "model": model,
        "collections": list(collections),
        "candidates": candidates,
        "query": query,
        "any_word": pairs is not None,
        "pairs": pairs,
        "weights": [float(w) for w in text_weights],
        "k": k,
        **narrow_params,
    }
    cur = await conn.execute(sql, params)
    return [dict(r) for r in await cur.fetchall()]


async def get_chunk(conn: Conn, chunk_id: UUID) -> dict[str, Any] | None:
    """One chunk with its document's name (None when the caller's transaction does not see it)."""
    cur = await conn.execute(
        """SELECT c.id AS chunk_id, c.document_id, d.filename, c.collection, c.classification, c.seq, c.page,
                  c.section, c.text
           FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
           WHERE c.id = %s""",
        [chunk_id],
    )
    row = await cur.fetchone()
    return dict(row) if row else None


async def nearest_ids(
    conn: Conn, vector: Sequence[float], model: str, dim: int, k: int, *, exact: bool, ef_search: int = EF_SEARCH
) -> list[UUID]:
    """The `k` nearest chunk ids of the org by cosine distance (the benchmark's recall measure)."""
    d = _dim_sql(dim)
    await conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
    if exact:
        await conn.execute("SET LOCAL enable_indexscan = off")
        await conn.execute("SET LOCAL enable_bitmapscan = off")
    cur = await conn.execute(
        f"""SELECT id FROM knowledge_chunks WHERE embedding_dim = {d} AND embedding_model = %s
            ORDER BY embedding::vector({d}) <=> %s::vector({d}) LIMIT %s""",
        [model, vector_literal(vector), k],
    )
    return [r["id"] for r in await cur.fetchall()]
