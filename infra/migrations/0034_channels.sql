-- Channels in (issue 34): Slack, Telegram and e-mail reach an agent of an org.

-- An org's channel: which workspace, bot or address it is (`external_key`: the Slack team id, the Telegram bot's
-- org slug, the inbound e-mail address in lower case), which agent answers (`agent`: a slug; NULL the built-in
-- assistant), and its secrets (Slack's bot token and signing secret, Telegram's bot token and secret token) sealed
-- as one JSON object like a webhook's signing secret (KMS on AWS, the local key file under `pa dev`).
CREATE TABLE channel_configs (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    kind                text NOT NULL CHECK (kind IN ('slack', 'telegram', 'email')),
    external_key        text NOT NULL CHECK (length(external_key) BETWEEN 1 AND 320),
    agent               text,
    secret_ciphertext   bytea,
    secret_nonce        bytea,
    secret_data_key     bytea,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, kind),
    UNIQUE (kind, external_key)
);
SELECT pa_enable_tenant_rls('channel_configs');

-- An inbound request names only its workspace, bot or address: this gives the org to verify it in, nothing else.
CREATE FUNCTION pa_channel_org(channel text, key text) RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT org_id FROM channel_configs WHERE kind = channel AND external_key = key
$$;
-- Slack's `url_verification` names no workspace: the orgs with a Slack app, to try each one's signing secret.
CREATE FUNCTION pa_channel_orgs(channel text) RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT org_id FROM channel_configs WHERE kind = channel ORDER BY created_at LIMIT 50
$$;
CREATE POLICY owner_lookup ON channel_configs FOR SELECT TO CURRENT_USER USING (true);

-- A channel user linked to an org member, once (a one-time code the member confirms in the web chat).
CREATE TABLE channel_links (
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('slack', 'telegram', 'email')),
    external_id  text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 320),
    user_id      uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    label        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, kind, external_id)
);
SELECT pa_enable_tenant_rls('channel_links');
CREATE INDEX channel_links_user ON channel_links (org_id, user_id);

-- The one-time codes an unlinked sender is given: 8 characters of A-Z and 2-9, valid 15 minutes, used once.
CREATE TABLE channel_link_codes (
    code         text PRIMARY KEY CHECK (code ~ '^[A-Z2-9]{8}$'),
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('slack', 'telegram', 'email')),
    external_id  text NOT NULL,
    label        text NOT NULL DEFAULT '',
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
SELECT pa_enable_tenant_rls('channel_link_codes');
CREATE INDEX channel_link_codes_sender ON channel_link_codes (org_id, kind, external_id, expires_at);

-- A conversation thread of a channel (a Slack thread, a Telegram chat, an e-mail thread's first Message-ID) and the
-- chat its runs land in.
CREATE TABLE channel_threads (
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('slack', 'telegram', 'email')),
    thread_key   text NOT NULL CHECK (length(thread_key) BETWEEN 1 AND 1000),
    chat_id      uuid NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, kind, thread_key)
);
SELECT pa_enable_tenant_rls('channel_threads');

-- Every inbound message or action once (a channel retries; a replayed request is refused), and the admin's log:
-- what came in, from whom, what it did (`status`) and its run. No message text is kept here.
CREATE TABLE channel_events (
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('slack', 'telegram', 'email')),
    event_id     text NOT NULL CHECK (length(event_id) BETWEEN 1 AND 1000),
    external_id  text NOT NULL DEFAULT '',
    status       text NOT NULL DEFAULT 'received',
    run_id       uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, kind, event_id)
);
SELECT pa_enable_tenant_rls('channel_events');
CREATE INDEX channel_events_recent ON channel_events (org_id, kind, created_at DESC);
