-- Issue 28, items 7 and 9.
--
-- 7. The org knowledge base has owners. Everyone in the org reads the `org` collection, but only a document's
-- author or an org admin may change or delete it, in SQL as in the service: RESTRICTIVE policies per command
-- (the read policies of 0015 are unchanged). An org admin is a session whose service set app.knowledge_admin
-- (the caller's roles, as the request's token grants them) AND whose user holds an admin role in the org's
-- memberships: a bug that sets the flag for a member still changes nothing. Chunks are written only by the ingest
-- worker (acting for the uploader, app.knowledge_worker) and deleted by it or by whoever may manage their document.
-- `trusted`: an admin vouches for a document's text; passages of a document the searcher did not author are
-- untrusted content unless it is set. A trigger lets only admins set it, and only admins put an `org` document
-- above the org's default classification (the classification at the org's tier floor).
ALTER TABLE knowledge_documents ADD COLUMN trusted boolean NOT NULL DEFAULT false;

CREATE FUNCTION pa_knowledge_worker() RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT coalesce(current_setting('app.knowledge_worker', true) = 'on', false) $$;

CREATE FUNCTION pa_knowledge_admin() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('app.knowledge_admin', true) = 'on', false) AND EXISTS (
        SELECT 1 FROM memberships m
        WHERE m.org_id = pa_current_org() AND m.user_id = pa_current_user() AND m.status = 'active'
          AND m.roles && ARRAY['admin', 'org-admin'])
$$;

CREATE FUNCTION pa_knowledge_may_manage(author uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT pa_knowledge_worker() OR author = pa_current_user() OR pa_knowledge_admin()
$$;

CREATE POLICY knowledge_document_author_insert ON knowledge_documents AS RESTRICTIVE FOR INSERT
    WITH CHECK (created_by = pa_current_user() OR pa_knowledge_worker());
CREATE POLICY knowledge_document_author_update ON knowledge_documents AS RESTRICTIVE FOR UPDATE
    USING (pa_knowledge_may_manage(created_by)) WITH CHECK (pa_knowledge_may_manage(created_by));
CREATE POLICY knowledge_document_author_delete ON knowledge_documents AS RESTRICTIVE FOR DELETE
    USING (pa_knowledge_may_manage(created_by));

CREATE POLICY knowledge_chunk_worker_insert ON knowledge_chunks AS RESTRICTIVE FOR INSERT
    WITH CHECK (pa_knowledge_worker());
CREATE POLICY knowledge_chunk_worker_update ON knowledge_chunks AS RESTRICTIVE FOR UPDATE
    USING (pa_knowledge_worker()) WITH CHECK (pa_knowledge_worker());
CREATE POLICY knowledge_chunk_manager_delete ON knowledge_chunks AS RESTRICTIVE FOR DELETE
    USING (pa_knowledge_worker() OR EXISTS (
        SELECT 1 FROM knowledge_documents d
        WHERE d.id = knowledge_chunks.document_id AND pa_knowledge_may_manage(d.created_by)));

CREATE FUNCTION pa_knowledge_document_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    floor_tier integer := coalesce((SELECT tier_floor FROM org_settings WHERE org_id = NEW.org_id), 0);
    new_tier integer := CASE NEW.classification WHEN 'standard' THEN 0 WHEN 'confidential' THEN 1 ELSE 2 END;
BEGIN
    IF pa_knowledge_worker() OR pa_knowledge_admin() THEN
        RETURN NEW;
    END IF;
    IF NEW.trusted AND (TG_OP = 'INSERT' OR NOT OLD.trusted) THEN
        RAISE EXCEPTION 'only an org admin may mark a document trusted' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.collection = 'org' AND new_tier > floor_tier
       AND (TG_OP = 'INSERT' OR NEW.classification IS DISTINCT FROM OLD.classification) THEN
        RAISE EXCEPTION 'only an org admin may classify an org document above the org default'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER knowledge_document_guard BEFORE INSERT OR UPDATE ON knowledge_documents
    FOR EACH ROW EXECUTE FUNCTION pa_knowledge_document_guard();

-- 9. Embeddings are metered. An embedding request (a document's chunks at ingest or re-embed, a search query)
-- is a ledger row like a model response, with no run: kind `embedding`, what it was for, the document it was
-- about. Budgets (which sum usage_records), the usage report and the operator's metering export
-- (pa_metering_usage sums every ledger row per org and model) count it with no change. The offline embedder is
-- recorded at cost 0, as the ledger records the offline demo model (a known price of nothing, not unknown).
-- A model response's row keeps its idempotency key UNIQUE(run_id, request_index); an embedding row is written once
-- per request actually sent (a redelivered ingest that embeds again was billed again).
ALTER TABLE usage_records
    ALTER COLUMN run_id DROP NOT NULL,
    ALTER COLUMN request_index DROP NOT NULL,
    ADD COLUMN kind text NOT NULL DEFAULT 'model' CHECK (kind IN ('model', 'embedding')),
    ADD COLUMN purpose text CHECK (purpose IN ('ingest', 'reembed', 'query')),
    ADD COLUMN document_id uuid,
    ADD CONSTRAINT usage_records_kind_shape CHECK (
        (kind = 'model' AND run_id IS NOT NULL AND request_index IS NOT NULL AND purpose IS NULL)
        OR (kind = 'embedding' AND run_id IS NULL AND request_index IS NULL AND purpose IS NOT NULL));
