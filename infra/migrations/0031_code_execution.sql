-- Code execution (`run_python`, issue 40): whether an org offers it, and the sandbox seconds it used.

-- NULL: the deployment's default (on for `pa dev` where the local sandbox's isolation is available, off on AWS
-- unless PA_SANDBOX_DEFAULT_ENABLED=1); an org admin turns it on or off with PUT /org/settings.
ALTER TABLE org_settings ADD COLUMN code_execution boolean;

-- The sandbox's meter: one row per call, the wall-clock seconds it held a sandbox. Append-only like the model
-- ledger (usage_records): deleting the chat or the run keeps it; only deleting the org removes it.
CREATE TABLE sandbox_usage (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id     uuid,
    chat_id     uuid,
    run_id      uuid NOT NULL,
    backend     text NOT NULL CHECK (backend IN ('local', 'lambda')),
    seconds     numeric(12, 3) NOT NULL CHECK (seconds >= 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);
SELECT pa_enable_tenant_rls('sandbox_usage');
CREATE INDEX sandbox_usage_run ON sandbox_usage (org_id, run_id);
CREATE INDEX sandbox_usage_created ON sandbox_usage (org_id, created_at);
CREATE TRIGGER sandbox_usage_append_only BEFORE UPDATE OR DELETE ON sandbox_usage
    FOR EACH ROW EXECUTE FUNCTION pa_append_only();

