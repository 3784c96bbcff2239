-- Issue 36, items 4 and 5: named collections ("HR policies") with owners and members, and sources that keep a
-- collection in sync with an S3 prefix or web pages.
--
-- A document's `collection` may now also be a collection's id; `collection_id` (generated from it) ties the
-- document and its chunks to the collection, so deleting a collection deletes them. Who may read a collection's
-- documents and chunks is enforced in SQL: RESTRICTIVE policies let a session see them only when its
-- app.current_user is a member of the collection (owner, writer or reader) and add one only as an owner or writer;
-- the ingest worker (app.knowledge_worker) acts for everyone, as in 0015. An org admin manages every collection of
-- the org (the service checks it) but reads its documents only as a member, like everyone else.
CREATE TABLE knowledge_collections (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 100),
    description  text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
    created_by   uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX knowledge_collections_name ON knowledge_collections (org_id, lower(name));
SELECT pa_enable_tenant_rls('knowledge_collections');

CREATE TABLE knowledge_collection_members (
    collection_id  uuid NOT NULL REFERENCES knowledge_collections(id) ON DELETE CASCADE,
    org_id         uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id        uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role           text NOT NULL CHECK (role IN ('owner', 'writer', 'reader')),
    PRIMARY KEY (collection_id, user_id)
);
CREATE INDEX knowledge_collection_members_user ON knowledge_collection_members (org_id, user_id);
SELECT pa_enable_tenant_rls('knowledge_collection_members');

-- The caller's role in a collection (NULL: none). Members rows are behind the org policy only: the policies
-- below read them, and a policy on the members table that read itself would recurse.
CREATE FUNCTION pa_knowledge_collection_role(c uuid) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT role FROM knowledge_collection_members WHERE collection_id = c AND user_id = pa_current_user()
$$;

CREATE FUNCTION pa_knowledge_may_read(c uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT c IS NULL OR pa_knowledge_worker() OR pa_knowledge_collection_role(c) IS NOT NULL
$$;

CREATE FUNCTION pa_knowledge_may_write(c uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT c IS NULL OR pa_knowledge_worker() OR pa_knowledge_collection_role(c) IN ('owner', 'writer')
$$;

-- Only an owner (or an org admin) changes a collection or its members; the creator adds themselves as its owner.
CREATE POLICY knowledge_collection_visible ON knowledge_collections AS RESTRICTIVE FOR SELECT
    USING (created_by = pa_current_user() OR pa_knowledge_may_read(id) OR pa_knowledge_admin());
CREATE POLICY knowledge_collection_manage ON knowledge_collections AS RESTRICTIVE FOR UPDATE
    USING (pa_knowledge_collection_role(id) = 'owner' OR pa_knowledge_admin());
CREATE POLICY knowledge_collection_delete ON knowledge_collections AS RESTRICTIVE FOR DELETE
    USING (pa_knowledge_collection_role(id) = 'owner' OR pa_knowledge_admin());
CREATE POLICY knowledge_collection_create ON knowledge_collections AS RESTRICTIVE FOR INSERT
    WITH CHECK (created_by = pa_current_user());
CREATE POLICY knowledge_member_insert ON knowledge_collection_members AS RESTRICTIVE FOR INSERT
    WITH CHECK (pa_knowledge_admin() OR pa_knowledge_collection_role(collection_id) = 'owner'
                OR EXISTS (SELECT 1 FROM knowledge_collections k
                           WHERE k.id = collection_id AND k.created_by = pa_current_user()
                             AND NOT EXISTS (SELECT 1 FROM knowledge_collection_members o
                                             WHERE o.collection_id = k.id)));
CREATE POLICY knowledge_member_delete ON knowledge_collection_members AS RESTRICTIVE FOR DELETE
    USING (pa_knowledge_admin() OR pa_knowledge_collection_role(collection_id) = 'owner');
CREATE POLICY knowledge_member_update ON knowledge_collection_members AS RESTRICTIVE FOR UPDATE
    USING (pa_knowledge_admin() OR pa_knowledge_collection_role(collection_id) = 'owner');

ALTER TABLE knowledge_documents DROP CONSTRAINT knowledge_documents_collection_check;
ALTER TABLE knowledge_documents DROP CONSTRAINT knowledge_documents_check;
ALTER TABLE knowledge_documents
    ADD CONSTRAINT knowledge_documents_collection_check
        CHECK (collection ~ '^(org|personal|chat:[0-9a-f-]{36}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$'),
    ADD COLUMN collection_id uuid GENERATED ALWAYS AS (
        CASE WHEN collection ~ '^[0-9a-f]{8}-' THEN collection::uuid END) STORED
        REFERENCES knowledge_collections(id) ON DELETE CASCADE,
    ADD CONSTRAINT knowledge_documents_owner_check
        CHECK ((collection = 'org' OR collection ~ '^[0-9a-f]{8}-') = (owner_user_id IS NULL));
ALTER TABLE knowledge_chunks
    ADD COLUMN collection_id uuid GENERATED ALWAYS AS (
        CASE WHEN collection ~ '^[0-9a-f]{8}-' THEN collection::uuid END) STORED;
CREATE INDEX knowledge_documents_collection_id ON knowledge_documents (collection_id) WHERE collection_id IS NOT NULL;

CREATE POLICY knowledge_document_collection_read ON knowledge_documents AS RESTRICTIVE FOR SELECT
    USING (pa_knowledge_may_read(collection_id));
CREATE POLICY knowledge_document_collection_write ON knowledge_documents AS RESTRICTIVE FOR INSERT
    WITH CHECK (pa_knowledge_may_write(collection_id));
CREATE POLICY knowledge_chunk_collection_read ON knowledge_chunks AS RESTRICTIVE FOR SELECT
    USING (pa_knowledge_may_read(collection_id));

-- Sources: where a collection's documents come from and stay in sync with. `every`: an EventBridge Scheduler
-- expression (`rate(1 hour)`, `cron(...)`) or NULL (events and "sync now" only). `allow_hosts`: the hosts a web
-- crawl may fetch (the address checks of `web_fetch` apply besides). `last_sync`: what the last sync did.
-- The service checks that the caller may read (see) or write (add, delete, sync) the source's collection.
CREATE TABLE knowledge_sources (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id          uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    collection_id   uuid NOT NULL REFERENCES knowledge_collections(id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('s3', 'sitemap', 'url')),
    bucket          text CHECK (bucket ~ '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$'),
    prefix          text NOT NULL DEFAULT '' CHECK (length(prefix) <= 1024),
    url             text CHECK (length(url) <= 2000),
    allow_hosts     text[] NOT NULL DEFAULT '{}',
    every           text CHECK (length(every) <= 200),
    classification  text NOT NULL DEFAULT 'standard'
                    CHECK (classification IN ('standard', 'confidential', 'restricted')),
    created_by      uuid NOT NULL REFERENCES users(id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    next_sync_at    timestamptz,
    last_sync_at    timestamptz,
    last_sync       jsonb,
    CHECK ((kind = 's3') = (bucket IS NOT NULL)),
    CHECK ((kind = 's3') = (url IS NULL))
);
CREATE INDEX knowledge_sources_due ON knowledge_sources (next_sync_at) WHERE next_sync_at IS NOT NULL;
CREATE INDEX knowledge_sources_bucket ON knowledge_sources (bucket) WHERE bucket IS NOT NULL;
SELECT pa_enable_tenant_rls('knowledge_sources');

-- One row per object or page a source brought in: its document, and what tells a changed one from an unchanged
-- one (the content's SHA-256; a page's ETag and Last-Modified for conditional requests).
CREATE TABLE knowledge_source_items (
    source_id      uuid NOT NULL REFERENCES knowledge_sources(id) ON DELETE CASCADE,
    org_id         uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    item_key       text NOT NULL CHECK (length(item_key) BETWEEN 1 AND 2048),
    document_id    uuid REFERENCES knowledge_documents(id) ON DELETE SET NULL,
    content_hash   text,
    etag           text,
    last_modified  text,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, item_key)
);
SELECT pa_enable_tenant_rls('knowledge_source_items');

-- A document a source brought in; `web`: its text was fetched from the web, untrusted content for every reader.
ALTER TABLE knowledge_documents
    ADD COLUMN source_id uuid REFERENCES knowledge_sources(id) ON DELETE CASCADE,
    ADD COLUMN web boolean NOT NULL DEFAULT false;

-- Pointers across orgs for the due-sources scan (the dev server's scheduler) and for routing a bucket's events
-- to the sources that watch it; their content stays behind RLS.
CREATE FUNCTION pa_due_knowledge_sources(due_by timestamptz, max_rows integer)
RETURNS TABLE (org_id uuid, source_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT s.org_id, s.id FROM knowledge_sources s
    WHERE s.next_sync_at <= due_by ORDER BY s.next_sync_at LIMIT max_rows
$$;

CREATE FUNCTION pa_knowledge_sources_of_bucket(bucket_name text)
RETURNS TABLE (org_id uuid, source_id uuid, prefix text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT s.org_id, s.id, s.prefix FROM knowledge_sources s WHERE s.kind = 's3' AND s.bucket = bucket_name
$$;

CREATE POLICY owner_scan ON knowledge_sources FOR SELECT TO CURRENT_USER USING (true);
