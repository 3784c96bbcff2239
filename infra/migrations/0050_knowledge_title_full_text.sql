-- The document's title in the full-text index (issue 36, item 2): a question that names a document ("the travel
-- policy") finds its chunks through full text, not only through the embedding (which has carried the title since
-- ingest began embedding `title › section path`). Each chunk keeps its document's title (`chunking.document_title`:
-- the file name without its extension, `_` and `-` as spaces), and `tsv` weighs what it indexes: the title A, the
-- section path B, the chunk's text D, so `ts_rank` (whose weights `chunk_store.hybrid_search` passes) can rank a
-- word of the title or a heading above the same word in passing. The query, the GIN index and the org/collection
-- scope in SQL are as before (`tsv @@ query`).
ALTER TABLE knowledge_chunks ADD COLUMN title text;

-- The backfill reads every org's rows: as the tables' owner, with RLS not forced for these statements only.
ALTER TABLE knowledge_chunks NO FORCE ROW LEVEL SECURITY;
ALTER TABLE knowledge_documents NO FORCE ROW LEVEL SECURITY;
UPDATE knowledge_chunks c
SET title = NULLIF(btrim(regexp_replace(
        translate(regexp_replace(d.filename, '\.[A-Za-z0-9]{1,5}$', ''), '_-', '  '), '\s+', ' ', 'g')), '')
FROM knowledge_documents d
WHERE d.id = c.document_id;
ALTER TABLE knowledge_documents FORCE ROW LEVEL SECURITY;
ALTER TABLE knowledge_chunks FORCE ROW LEVEL SECURITY;

-- Dropping the column drops its GIN index; the new one is computed for every row as the column is added.
ALTER TABLE knowledge_chunks DROP COLUMN tsv;
ALTER TABLE knowledge_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(title, '')), 'A')
    || setweight(to_tsvector('english', coalesce(section, '')), 'B')
    || setweight(to_tsvector('english', text), 'D')) STORED;
CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING gin (tsv);
