-- Sharing and retention (issue 38): share links to a frozen snapshot of a chat, temporary chats, and an org's
-- data policy (who may share publicly, how long a temporary chat lives, how long chats live by classification).

-- A share: a read-only snapshot of one branch of a chat up to a message, frozen when it was made (`snapshot`:
-- the transcript items as the page shows them; `messages`: the user and assistant text a "continue" copies).
-- The link's secret is never stored: `token_hash` is its SHA-256.
CREATE TABLE chat_shares (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id          uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    chat_id         uuid NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    user_id         uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash      text NOT NULL UNIQUE,
    audience        text NOT NULL CHECK (audience IN ('org', 'public')),
    title           text NOT NULL,
    classification  text NOT NULL,
    content_tier    integer NOT NULL DEFAULT 0,
    untrusted       boolean NOT NULL DEFAULT false,
    upto_message_id bigint,
    show_tools      boolean NOT NULL DEFAULT false,
    snapshot        jsonb NOT NULL,
    messages        jsonb NOT NULL,
    expires_at      timestamptz,
    revoked_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_shares_owner ON chat_shares (org_id, user_id, created_at DESC);
SELECT pa_enable_tenant_rls('chat_shares');

-- A share link names only its token: this gives the org to read it in, and nothing else crosses tenants.
CREATE FUNCTION pa_share_org(hash text) RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT org_id FROM chat_shares WHERE token_hash = hash
$$;
CREATE POLICY owner_lookup ON chat_shares FOR SELECT TO CURRENT_USER USING (true);

-- Every share made, viewed, continued or revoked (who, what, when; never content). Append-only.
CREATE TABLE share_audit (
    id         bigserial PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    share_id   uuid NOT NULL,
    chat_id    uuid NOT NULL,
    actor_id   uuid,
    action     text NOT NULL CHECK (action IN ('created', 'viewed', 'continued', 'revoked')),
    audience   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX share_audit_org_time ON share_audit (org_id, created_at DESC);
SELECT pa_enable_tenant_rls('share_audit');
CREATE TRIGGER share_audit_append_only BEFORE UPDATE OR DELETE ON share_audit
    FOR EACH ROW EXECUTE FUNCTION pa_append_only();

-- An org's data policy: public share links allowed or not; how long a temporary chat lives; how many days a chat
-- of each classification is kept after its last activity (NULL: forever).
CREATE TABLE org_data_policies (
    org_id               uuid PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
    allow_public_shares  boolean NOT NULL DEFAULT false,
    temporary_hours      integer NOT NULL DEFAULT 24 CHECK (temporary_hours BETWEEN 1 AND 8760),
    standard_days        integer CHECK (standard_days BETWEEN 1 AND 36500),
    confidential_days    integer CHECK (confidential_days BETWEEN 1 AND 36500),
    restricted_days      integer CHECK (restricted_days BETWEEN 1 AND 36500),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
SELECT pa_enable_tenant_rls('org_data_policies');

-- A temporary chat: not listed, and deleted (with its runs and messages; the ledger keeps its rows) at this time.
ALTER TABLE chats ADD COLUMN temporary_until timestamptz;
CREATE INDEX chats_temporary_until ON chats (temporary_until) WHERE temporary_until IS NOT NULL;

-- What each retention sweep deleted: counts only, never content. Append-only.
CREATE TABLE retention_runs (
    id          bigserial PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    temporary_chats integer NOT NULL DEFAULT 0,
    expired_chats   integer NOT NULL DEFAULT 0,
    ran_at      timestamptz NOT NULL DEFAULT now()
);
SELECT pa_enable_tenant_rls('retention_runs');

-- The sweep's scan: the orgs with something due (pointers only; the rows stay behind RLS).
CREATE FUNCTION pa_retention_due_orgs(due_by timestamptz, max_rows integer) RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT DISTINCT org_id FROM chats WHERE temporary_until <= due_by
    UNION
    SELECT org_id FROM org_data_policies
    WHERE standard_days IS NOT NULL OR confidential_days IS NOT NULL OR restricted_days IS NOT NULL
    LIMIT max_rows
$$;
CREATE POLICY owner_scan ON chats FOR SELECT TO CURRENT_USER USING (true);
CREATE POLICY owner_scan ON org_data_policies FOR SELECT TO CURRENT_USER USING (true);
