-- Workflows: runs started by webhooks and schedules, whose messages land in a chat of the workflow's owner.

CREATE TABLE workflows (
    id                        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id                    uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    owner_id                  uuid NOT NULL REFERENCES users(id),
    chat_id                   uuid REFERENCES chats(id) ON DELETE SET NULL,   -- NULL: a new chat at the next run
    name                      text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    instructions              text,
    prompt_template           text NOT NULL,
    model                     text,
    tools                     text[],                                         -- NULL: the default tools
    approval_policy           text NOT NULL DEFAULT 'wait' CHECK (approval_policy IN ('wait', 'deny')),
    approval_timeout_seconds  integer NOT NULL DEFAULT 86400
                              CHECK (approval_timeout_seconds BETWEEN 1 AND 604800),
    rate_limit_per_minute     integer NOT NULL DEFAULT 60 CHECK (rate_limit_per_minute BETWEEN 1 AND 10000),
    webhook_enabled           boolean NOT NULL DEFAULT true,
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflows_org ON workflows (org_id, created_at DESC, id DESC);

-- Webhook credentials. Signing secrets are sealed (AES-GCM; a KMS data key on AWS), because the HMAC needs
-- the secret itself; bearer tokens are stored as SHA-256. Rotation keeps the old one until `expires_at`.
CREATE TABLE workflow_credentials (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    workflow_id         uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    kind                text NOT NULL CHECK (kind IN ('signing_secret', 'bearer_token')),
    ciphertext          bytea,
    nonce               bytea,
    encrypted_data_key  bytea,               -- NULL when sealed with the local key (local mode)
    token_hash          text UNIQUE,
    hint                text NOT NULL,       -- the first characters, for display
    expires_at          timestamptz,         -- set when rotated out; accepted until then
    created_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'signing_secret') = (ciphertext IS NOT NULL AND nonce IS NOT NULL)),
    CHECK ((kind = 'bearer_token') = (token_hash IS NOT NULL))
);
CREATE INDEX workflow_credentials_workflow ON workflow_credentials (org_id, workflow_id, kind);

-- A workflow's schedule. On AWS, EventBridge Scheduler fires it; locally the dev server's scheduler loop
-- fires what is due (next_fire_at) and moves it on in the same transaction that claims the fire.
CREATE TABLE workflow_schedules (
    workflow_id    uuid PRIMARY KEY REFERENCES workflows(id) ON DELETE CASCADE,
    org_id         uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    expression     text NOT NULL,          -- cron(...) or rate(...), as EventBridge Scheduler takes it
    timezone       text NOT NULL DEFAULT 'UTC',
    enabled        boolean NOT NULL DEFAULT true,
    anchor_at      timestamptz NOT NULL DEFAULT now(),   -- rate() counts from here
    next_fire_at   timestamptz,
    last_fired_at  timestamptz,
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflow_schedules_due ON workflow_schedules (next_fire_at) WHERE enabled;

-- Every webhook delivery and schedule fire, claimed by a unique key before a run starts: the same
-- webhook-id or fire time never starts a second run. Also the workflow's run history.
CREATE TABLE workflow_deliveries (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    workflow_id  uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    source       text NOT NULL CHECK (source IN ('webhook', 'schedule')),
    dedupe_key   text NOT NULL,          -- webhook-id (or Idempotency-Key), or the scheduled time
    run_id       uuid REFERENCES runs(id) ON DELETE SET NULL,
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'started', 'skipped', 'failed')),
    error        jsonb,
    claimed_at   timestamptz NOT NULL DEFAULT now(),
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workflow_id, source, dedupe_key)
);
CREATE INDEX workflow_deliveries_history ON workflow_deliveries (org_id, workflow_id, created_at DESC, id DESC);

-- Webhook requests per workflow in the current one-minute window.
CREATE TABLE workflow_rate_windows (
    workflow_id   uuid PRIMARY KEY REFERENCES workflows(id) ON DELETE CASCADE,
    org_id        uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    window_start  timestamptz NOT NULL,
    hits          integer NOT NULL
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['workflows', 'workflow_credentials', 'workflow_schedules', 'workflow_deliveries',
                             'workflow_rate_windows']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = pa_current_org()) '
                       'WITH CHECK (org_id = pa_current_org())', t);
    END LOOP;
END $$;

-- A webhook URL names only its workflow: this gives the org to verify it in, and nothing else crosses tenants.
CREATE FUNCTION pa_workflow_org(workflow uuid) RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT org_id FROM workflows WHERE id = workflow
$$;

-- The local scheduler's scan: pointers to the due schedules of every org (their content stays behind RLS).
CREATE FUNCTION pa_due_schedules(due_by timestamptz, max_rows integer)
RETURNS TABLE (org_id uuid, workflow_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT s.org_id, s.workflow_id FROM workflow_schedules s
    WHERE s.enabled AND s.next_fire_at <= due_by ORDER BY s.next_fire_at LIMIT max_rows
$$;

-- Under FORCE RLS the owner is filtered too (outside superuser setups such as RDS): let the owner role,
-- which only these SECURITY DEFINER functions run as, read the rows they look at.
CREATE POLICY owner_lookup ON workflows FOR SELECT TO CURRENT_USER USING (true);
CREATE POLICY owner_scan ON workflow_schedules FOR SELECT TO CURRENT_USER USING (true);
