-- Data exports (issue 38): a person's (`scope` user) or an org admin's (`scope` org) export is built in the
-- background into one ZIP object in the documents bucket (`exports/…`); this row says how far it got and where the
-- object is. `expires_at`: the retention sweep deletes the object and the row after it (the template's lifecycle
-- rule on `exports/` is the backstop). No content here.
CREATE TABLE data_exports (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    scope       text NOT NULL CHECK (scope IN ('user', 'org')),
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'ready', 'failed')),
    object_key  text,
    size_bytes  bigint,
    error       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX data_exports_owner ON data_exports (org_id, user_id, created_at DESC);
CREATE INDEX data_exports_expiry ON data_exports (expires_at);
SELECT pa_enable_tenant_rls('data_exports');

-- The sweep's scan: the orgs with an export past its time (pointers only; the rows stay behind RLS).
CREATE FUNCTION pa_expired_export_orgs(due_by timestamptz, max_rows integer) RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT DISTINCT org_id FROM data_exports WHERE expires_at <= due_by LIMIT max_rows
$$;
CREATE POLICY owner_scan ON data_exports FOR SELECT TO CURRENT_USER USING (true);

-- The sweep records how many expired exports it deleted beside the chats (counts only).
ALTER TABLE retention_runs ADD COLUMN expired_exports integer NOT NULL DEFAULT 0;
