-- Retention covers what hangs off a chat and a person's and the org's data (issue 38): attachments (their objects
-- first), memories (by the tier they carry) and knowledge documents (object and chunks). The sweep acts for every
-- member of the org, so the owner-only policies of memories (0016) and attachments (0025) also let a session that
-- says app.retention_sweep see and delete a row; only `lifecycle/content_retention.py` sets it, inside an org
-- transaction (the org policy still applies), and no request handler does.
CREATE FUNCTION pa_retention_sweep() RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT coalesce(current_setting('app.retention_sweep', true) = 'on', false) $$;

ALTER POLICY memory_owner ON memories
    USING (user_id = pa_current_user() OR pa_retention_sweep()) WITH CHECK (user_id = pa_current_user());
ALTER POLICY attachment_owner ON attachments
    USING (user_id = pa_current_user() OR pa_retention_sweep()) WITH CHECK (user_id = pa_current_user());

-- What each sweep deleted of them (counts only).
ALTER TABLE retention_runs
    ADD COLUMN expired_attachments integer NOT NULL DEFAULT 0,
    ADD COLUMN expired_memories integer NOT NULL DEFAULT 0,
    ADD COLUMN expired_documents integer NOT NULL DEFAULT 0;

CREATE INDEX memories_retention ON memories (org_id, content_tier, updated_at);
CREATE INDEX knowledge_documents_retention ON knowledge_documents (org_id, classification, updated_at);
