-- Core schema: the tenant directory, chats, runs, the usage ledger, keys and tokens.
-- Every tenant-owned table carries org_id and has RLS enabled and FORCED; the policies read
-- app.current_org and match nothing when it is unset (fail closed).

CREATE EXTENSION IF NOT EXISTS vector;

CREATE OR REPLACE FUNCTION pa_current_org() RETURNS uuid
LANGUAGE sql STABLE AS $$ SELECT NULLIF(current_setting('app.current_org', true), '')::uuid $$;

-- Global directory tables (no tenant content): orgs and users are looked up while authenticating.
CREATE TABLE orgs (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    slug        text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    issuer        text NOT NULL,
    subject       text NOT NULL,
    email         text,
    display_name  text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (issuer, subject)
);

CREATE TABLE memberships (
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    roles       text[] NOT NULL DEFAULT ARRAY['user'],
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id),
    CHECK (roles <@ ARRAY['admin', 'org-admin', 'user'])
);

CREATE TABLE chats (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id          uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id         uuid NOT NULL REFERENCES users(id),
    title           text NOT NULL DEFAULT 'New chat',
    classification  text NOT NULL DEFAULT 'standard',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chats_org_user_updated ON chats (org_id, user_id, updated_at DESC, id DESC);

CREATE TABLE runs (
    id              uuid PRIMARY KEY,
    org_id          uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    chat_id         uuid REFERENCES chats(id) ON DELETE CASCADE,
    user_id         uuid REFERENCES users(id),
    parent_run_id   uuid REFERENCES runs(id),
    status          text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'skipped')),
    mode            text NOT NULL CHECK (mode IN ('inline', 'durable')),
    trigger_source  text NOT NULL DEFAULT 'chat',
    execution_arn   text,
    spec            jsonb NOT NULL,
    model_name      text,
    error           jsonb,
    cancel_requested boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz
);
CREATE INDEX runs_org_chat ON runs (org_id, chat_id, created_at DESC);

CREATE TABLE messages (
    id          bigserial PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    chat_id     uuid NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    run_id      uuid REFERENCES runs(id) ON DELETE SET NULL,
    kind        text NOT NULL CHECK (kind IN ('request', 'response')),
    message     jsonb NOT NULL,          -- one pydantic-ai ModelMessage as JSON
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_chat ON messages (org_id, chat_id, id);

CREATE TABLE run_checkpoints (
    run_id      uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq         integer NOT NULL,
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    kind        text NOT NULL,           -- model_response | tool_results | start
    messages    jsonb NOT NULL,          -- the run's new messages so far, pydantic-ai JSON
    state       jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE usage_records (
    id              bigserial PRIMARY KEY,
    org_id          uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    run_id          uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    request_index   integer NOT NULL,
    user_id         uuid REFERENCES users(id),
    chat_id         uuid,
    model_name      text NOT NULL,
    provider        text,
    input_tokens    bigint NOT NULL DEFAULT 0,
    output_tokens   bigint NOT NULL DEFAULT 0,
    cache_read_tokens  bigint NOT NULL DEFAULT 0,
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    cost_usd        numeric(18, 8),      -- NULL means unknown (unpriced model), never zero by default
    price_version   text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (run_id, request_index)
);
CREATE INDEX usage_org_time ON usage_records (org_id, created_at);

CREATE TABLE provider_keys (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id          uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    provider        text NOT NULL,
    label           text NOT NULL DEFAULT '',
    ciphertext      bytea NOT NULL,
    nonce           bytea NOT NULL,
    encrypted_data_key bytea NOT NULL,
    key_hint        text NOT NULL,       -- last four characters, for display
    created_by      uuid REFERENCES users(id),
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id        uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id       uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name          text NOT NULL,
    token_hash    text NOT NULL UNIQUE,
    prefix        text NOT NULL,
    roles         text[] NOT NULL DEFAULT ARRAY['user'],
    expires_at    timestamptz,
    revoked_at    timestamptz,
    last_used_at  timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Row-level security: one policy per tenant table, the same predicate everywhere.
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memberships', 'chats', 'runs', 'messages', 'run_checkpoints',
                             'usage_records', 'provider_keys', 'api_tokens']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = pa_current_org()) '
                       'WITH CHECK (org_id = pa_current_org())', t);
    END LOOP;
END $$;

-- A personal access token is found by its hash before the org is known: the caller proves it
-- holds the secret by setting app.token_hash, and sees that one row only.
CREATE POLICY token_lookup ON api_tokens FOR SELECT
    USING (token_hash = NULLIF(current_setting('app.token_hash', true), ''));
-- Likewise a user's memberships are readable while authenticating that user.
CREATE POLICY membership_lookup ON memberships FOR SELECT
    USING (user_id = NULLIF(current_setting('app.auth_user', true), '')::uuid);
