-- Memories: what the agent keeps about one person (`remember` tool) and puts into the instructions of their later
-- runs. A memory belongs to one user in one org and to nobody else: besides the org policy, a RESTRICTIVE policy
-- requires app.current_user to name its owner, so even a query of the right org sees only the caller's own.
CREATE FUNCTION pa_current_user() RETURNS uuid
LANGUAGE sql STABLE AS $$ SELECT NULLIF(current_setting('app.current_user', true), '')::uuid $$;

CREATE TABLE memories (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id           uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id          uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    text             text NOT NULL CHECK (length(text) BETWEEN 1 AND 1000),
    source_run_id    uuid,                  -- the run whose `remember` call saved it (NULL: typed in Settings)
    embedding        real[],                -- of `text` by `embedding_model`; NULL until the engine embeds it
    embedding_model  text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memories_owner ON memories (org_id, user_id, updated_at DESC);
SELECT pa_enable_tenant_rls('memories');
CREATE POLICY memory_owner ON memories AS RESTRICTIVE
    USING (user_id = pa_current_user()) WITH CHECK (user_id = pa_current_user());

-- Files dropped into a chat's composer: uploaded straight to the documents bucket (presigned POST) under
-- attachments/{org_id}/..., then named by id in the run that uses them. Images reach the model as binary
-- content; documents become knowledge documents of the chat (collection `chat:<chat_id>`).
CREATE TABLE attachments (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id        uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id       uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    chat_id       uuid NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    kind          text NOT NULL CHECK (kind IN ('image', 'document')),
    filename      text NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
    content_type  text NOT NULL,
    size          bigint NOT NULL CHECK (size > 0),
    object_key    text NOT NULL UNIQUE,
    run_id        uuid,                     -- the run whose message it was sent with (NULL: not sent yet)
    document_id   uuid,                     -- its knowledge document (documents only)
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX attachments_chat ON attachments (chat_id, created_at);
SELECT pa_enable_tenant_rls('attachments');
