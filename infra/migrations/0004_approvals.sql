-- Human approval of deferred tool calls, with an audit trail.
CREATE TABLE approvals (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id          uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    run_id          uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    chat_id         uuid REFERENCES chats(id) ON DELETE CASCADE,
    owner_id        uuid REFERENCES users(id),
    checkpoint_seq  integer NOT NULL,
    tool_call_id    text NOT NULL,
    tool_name       text NOT NULL,
    args            jsonb NOT NULL DEFAULT '{}'::jsonb,
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
    reason          text,
    edited_args     jsonb,
    decided_by      uuid REFERENCES users(id),
    decided_at      timestamptz,
    expires_at      timestamptz NOT NULL,
    task_token      text,                 -- the waiting Step Functions task; never sent to clients
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (run_id, tool_call_id)
);
CREATE INDEX approvals_pending ON approvals (org_id, status, owner_id);

CREATE TABLE approval_audit (
    id           bigserial PRIMARY KEY,
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    approval_id  uuid NOT NULL REFERENCES approvals(id) ON DELETE CASCADE,
    actor_id     uuid REFERENCES users(id),
    action       text NOT NULL,         -- requested | approved | denied | expired
    detail       jsonb NOT NULL DEFAULT '{}'::jsonb,
    at           timestamptz NOT NULL DEFAULT now()
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['approvals', 'approval_audit']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = pa_current_org()) '
                       'WITH CHECK (org_id = pa_current_org())', t);
    END LOOP;
END $$;
