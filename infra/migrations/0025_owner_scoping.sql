-- Issue 28, items 10 and 11: what belongs to one person stays theirs, and the platform's own records stay the
-- platform's.

-- A workflow's triggered runs (webhook, schedule, test-fire) recall its owner's memories only when the owner
-- opted in: a run nobody is watching should not carry what a person told the agent about themselves.
ALTER TABLE workflows ADD COLUMN recall_memories boolean NOT NULL DEFAULT false;

-- Attachments belong to the person who uploaded them, like memories (0016): besides the org policy, a RESTRICTIVE
-- policy requires app.current_user to name the uploader, so a query of the right org sees only the caller's own
-- (the attachments store sets the acting user; a run reads its files as its user).
CREATE POLICY attachment_owner ON attachments AS RESTRICTIVE
    USING (user_id = pa_current_user()) WITH CHECK (user_id = pa_current_user());

-- The metering export ledger holds every org's totals: no tenant-scoped session (app.current_org set) reads or
-- writes it; only the exporter's system transaction (no org) does.
ALTER TABLE metering_exports ENABLE ROW LEVEL SECURITY;
ALTER TABLE metering_exports FORCE ROW LEVEL SECURITY;
CREATE POLICY platform_only ON metering_exports
    USING (pa_current_org() IS NULL) WITH CHECK (pa_current_org() IS NULL);

-- The cross-org metering sums run as the owner (SECURITY DEFINER): not for PUBLIC (any role that can log in),
-- only for `pa_metering`, which the migrator grants to the app role (db/migrate.py) the exporter connects as.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pa_metering') THEN
        CREATE ROLE pa_metering NOLOGIN;
    END IF;
EXCEPTION WHEN duplicate_object THEN NULL;  -- roles are per cluster: another database's migration made it first
END $$;
REVOKE EXECUTE ON FUNCTION pa_metering_usage(timestamptz, timestamptz) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pa_metering_runs(timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pa_metering_usage(timestamptz, timestamptz) TO pa_metering;
GRANT EXECUTE ON FUNCTION pa_metering_runs(timestamptz, timestamptz) TO pa_metering;

-- A user's running sub-agents, counted before `delegate` starts another (the per-user cap on concurrent children).
CREATE INDEX runs_active_children_per_user ON runs (user_id)
    WHERE parent_run_id IS NOT NULL AND status NOT IN ('succeeded', 'failed', 'cancelled', 'skipped');
