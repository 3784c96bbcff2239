-- The knowledge base: documents uploaded to the documents bucket (presigned POST under documents/{org}/{id}/...),
-- ingested by functions/ingest into chunks with a pgvector embedding and a tsvector for hybrid search.
--
-- Collections: `org` (everyone in the org), `personal` (one user's own) and `chat:<chat_id>` (files attached in
-- one chat). Besides the org policy, a RESTRICTIVE policy hides a document or chunk that has an owner from every
-- session whose app.current_user is not that owner: a colleague's personal files are invisible even in SQL. The
-- ingest worker (which acts for whoever uploaded, knowing only the object key) says so with app.knowledge_worker;
-- request handlers never set it (knowledge/transaction.py is the only place that does).
CREATE TABLE knowledge_documents (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id            uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    created_by        uuid NOT NULL REFERENCES users(id),
    owner_user_id     uuid REFERENCES users(id) ON DELETE CASCADE,  -- NULL: the org's collection
    collection        text NOT NULL CHECK (collection ~ '^(org|personal|chat:[0-9a-f-]{36})$'),
    filename          text NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
    content_type      text NOT NULL,
    size              bigint NOT NULL CHECK (size BETWEEN 1 AND 26214400),
    classification    text NOT NULL DEFAULT 'standard'
                      CHECK (classification IN ('standard', 'confidential', 'restricted')),
    object_key        text NOT NULL UNIQUE,
    status            text NOT NULL DEFAULT 'uploading'
                      CHECK (status IN ('uploading', 'processing', 'ready', 'failed')),
    error_code        text,
    error_message     text,
    object_version    text,            -- the S3 version (or ETag) the chunks were made from: redeliveries skip it
    pages             integer,
    chunk_count       integer NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CHECK ((collection = 'org') = (owner_user_id IS NULL))
);
CREATE INDEX knowledge_documents_list ON knowledge_documents (org_id, collection, created_at DESC);
SELECT pa_enable_tenant_rls('knowledge_documents');
CREATE POLICY knowledge_document_owner ON knowledge_documents AS RESTRICTIVE
    USING (owner_user_id IS NULL OR owner_user_id = NULLIF(current_setting('app.current_user', true), '')::uuid
           OR current_setting('app.knowledge_worker', true) = 'on')
    WITH CHECK (owner_user_id IS NULL OR owner_user_id = NULLIF(current_setting('app.current_user', true), '')::uuid
                OR current_setting('app.knowledge_worker', true) = 'on');

-- One row per chunk. `embedding` has no fixed dimension (orgs choose their model); each dimension in use has a
-- partial HNSW index over the cast column, and every vector query names the model and the dimension, so vectors
-- of different models are never compared. ef_construction 128 (default 64): a better graph for recall@10 >= 0.95.
CREATE TABLE knowledge_chunks (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id            uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    document_id       uuid NOT NULL REFERENCES knowledge_documents(id) ON DELETE CASCADE,
    owner_user_id     uuid,
    collection        text NOT NULL,
    classification    text NOT NULL,
    seq               integer NOT NULL,
    page              integer,
    section           text,
    text              text NOT NULL,
    tokens            integer NOT NULL,
    embedding         vector NOT NULL,
    embedding_model   text NOT NULL,
    embedding_dim     integer NOT NULL CHECK (embedding_dim = vector_dims(embedding)),
    tsv               tsvector GENERATED ALWAYS AS (
                          to_tsvector('english', coalesce(section, '') || ' ' || text)) STORED,
    UNIQUE (document_id, seq)
);
CREATE INDEX knowledge_chunks_scope ON knowledge_chunks (org_id, collection, embedding_model);
CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING gin (tsv);
CREATE INDEX knowledge_chunks_hnsw_256 ON knowledge_chunks
    USING hnsw ((embedding::vector(256)) vector_cosine_ops) WITH (m = 16, ef_construction = 128)
    WHERE embedding_dim = 256;
CREATE INDEX knowledge_chunks_hnsw_1024 ON knowledge_chunks
    USING hnsw ((embedding::vector(1024)) vector_cosine_ops) WITH (m = 16, ef_construction = 128)
    WHERE embedding_dim = 1024;
CREATE INDEX knowledge_chunks_hnsw_1536 ON knowledge_chunks
    USING hnsw ((embedding::vector(1536)) vector_cosine_ops) WITH (m = 16, ef_construction = 128)
    WHERE embedding_dim = 1536;
SELECT pa_enable_tenant_rls('knowledge_chunks');
CREATE POLICY knowledge_chunk_owner ON knowledge_chunks AS RESTRICTIVE
    USING (owner_user_id IS NULL OR owner_user_id = NULLIF(current_setting('app.current_user', true), '')::uuid
           OR current_setting('app.knowledge_worker', true) = 'on')
    WITH CHECK (owner_user_id IS NULL OR owner_user_id = NULLIF(current_setting('app.current_user', true), '')::uuid
                OR current_setting('app.knowledge_worker', true) = 'on');

-- The org's embedding model (absent: the offline model that ships in the worker). Changing it re-embeds every
-- chunk in the background; until a chunk is re-embedded, vector search skips it (full-text search still finds it).
CREATE TABLE knowledge_settings (
    org_id            uuid PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
    embedding_model   text NOT NULL,
    updated_at        timestamptz NOT NULL DEFAULT now()
);
SELECT pa_enable_tenant_rls('knowledge_settings');

-- Under RLS only LEAKPROOF operators may be index conditions ahead of the policies, so `tsv @@ query` would scan
-- every chunk of the org instead of using the GIN index (EXPLAIN ANALYZE: a sequential scan, ~100 ms per 20k chunks).
-- `tsvector @@ tsquery` raises no error that depends on the row (it reads the row's lexemes and answers a
-- boolean), so it is marked LEAKPROOF where the migrating role may (a superuser: the embedded Postgres, a
-- self-managed server). Elsewhere (RDS) search stays correct and scans per org; docs/knowledge.md says how to
-- apply it there.
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ALTER FUNCTION ts_match_vq(tsvector, tsquery) LEAKPROOF;
    END IF;
END $$;
