-- Human input (issue 33, items 1 and 2).
--
-- Questions (`ask_user`) are the same durable wait as approvals: a deferred tool call of one wait
-- (`checkpoint_seq`), with the same task token, timeout and resume. So a question is a row of `approvals` with
-- `kind = 'question'`: `args` holds its form ({question, choices?, schema?, default?}), `answer` the person's answer
-- (or the default taken at the timeout), and its status goes `pending` -> `answered` (or `expired`).
ALTER TABLE approvals
    ADD COLUMN kind text NOT NULL DEFAULT 'approval' CHECK (kind IN ('approval', 'question')),
    ADD COLUMN answer jsonb;
ALTER TABLE approvals DROP CONSTRAINT approvals_status_check;
ALTER TABLE approvals ADD CONSTRAINT approvals_status_check
    CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'answered'));
CREATE INDEX approvals_questions ON approvals (org_id, owner_id, status) WHERE kind = 'question';

-- Follow-ups while a run is active: a chat's policy for a message that arrives while one of its runs is active.
-- `enqueue` (the default) keeps the message here until the run ends; `interrupt` also stops the run at its next safe
-- point; `reject` refuses it (409 `run_in_progress`).
ALTER TABLE chats ADD COLUMN followup_policy text NOT NULL DEFAULT 'enqueue'
    CHECK (followup_policy IN ('reject', 'enqueue', 'interrupt'));

-- A message waiting for its chat's active run to end: what launches its run then (`request`, the launch request as
-- JSON, with the run id it will have), in order of arrival. `started` once its run is stored (in the launch's
-- transaction), `cancelled` by its sender, `failed` when its launch was refused (`error`).
CREATE TABLE chat_followups (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq         bigint GENERATED ALWAYS AS IDENTITY,  -- the order of arrival
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    chat_id     uuid NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    user_id     uuid REFERENCES users(id) ON DELETE CASCADE,
    run_id      uuid NOT NULL UNIQUE,
    message     text NOT NULL,
    request     jsonb NOT NULL,
    source      text NOT NULL,
    status      text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'started', 'cancelled', 'failed')),
    error       jsonb,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    decided_at  timestamptz
);
CREATE INDEX chat_followups_queue ON chat_followups (chat_id, seq) WHERE status = 'queued';
SELECT pa_enable_tenant_rls('chat_followups');
