-- Search inside chats, not only their titles: a full-text vector over what people and the assistant wrote
-- (user prompts and the model's text parts of each pydantic-ai message; not system prompts, tool arguments or
-- tool results). `messages` keeps its forced RLS, so a search only ever sees the org in `app.current_org`.
ALTER TABLE messages ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('english', jsonb_path_query_array(
        message, 'lax $.parts[*] ? (@.part_kind == "user-prompt" || @.part_kind == "text").content'))
) STORED;
CREATE INDEX messages_search ON messages USING gin (search_tsv);

-- Workflow outputs: where each triggered run's result (and each pending approval of a headless run) is sent.
-- A callback URL signed with Standard Webhooks, a Slack or Teams incoming webhook, or an e-mail through SES.
-- What must stay secret (a callback's signing secret, a Slack/Teams URL, which is its own credential) is sealed
-- like the workflow's signing secrets (`workflows.credentials`); `target_hint` is what the UI shows.
CREATE TABLE workflow_outputs (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    workflow_id         uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    kind                text NOT NULL CHECK (kind IN ('webhook', 'slack', 'teams', 'email')),
    target_hint         text NOT NULL,
    email               text,
    ciphertext          bytea,
    nonce               bytea,
    encrypted_data_key  bytea,
    events              text[] NOT NULL DEFAULT ARRAY['run.finished', 'approval.requested'],
    enabled             boolean NOT NULL DEFAULT true,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'email') = (email IS NOT NULL)),
    CHECK (kind = 'email' OR (ciphertext IS NOT NULL AND nonce IS NOT NULL))
);
CREATE INDEX workflow_outputs_workflow ON workflow_outputs (org_id, workflow_id, created_at);
SELECT pa_enable_tenant_rls('workflow_outputs');

-- The delivery log: one row per output and event (a run's result, an approval), its attempts and last error.
-- Retries go through the outputs queue with a growing delay; a redelivery starts the attempts again.
CREATE TABLE workflow_output_deliveries (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id            uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    workflow_id       uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    output_id         uuid NOT NULL REFERENCES workflow_outputs(id) ON DELETE CASCADE,
    event             text NOT NULL CHECK (event IN ('run.finished', 'approval.requested')),
    event_key         text NOT NULL,
    run_id            uuid REFERENCES runs(id) ON DELETE SET NULL,
    payload           jsonb NOT NULL,
    status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'retrying', 'succeeded', 'failed')),
    attempts          integer NOT NULL DEFAULT 0,
    last_error        text,
    last_status_code  integer,
    next_attempt_at   timestamptz,
    delivered_at      timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (output_id, event, event_key)
);
CREATE INDEX workflow_output_deliveries_log
    ON workflow_output_deliveries (org_id, workflow_id, created_at DESC, id DESC);
SELECT pa_enable_tenant_rls('workflow_output_deliveries');
