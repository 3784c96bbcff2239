-- Inline runs hold a lease while a worker drives them: the worker renews it (a heartbeat), so a run whose
-- worker died is found by its expired lease and resumed from its last checkpoint, or failed past a retry limit.
--   lease_owner       the worker driving the run now (NULL: nobody; the next driver may take it at once)
--   lease_expires_at  when the run counts as abandoned unless a driver renews or takes it
--   attempts          drives in a row that did not end in order (a clean release resets it to 0)
ALTER TABLE runs
    ADD COLUMN lease_owner      text,
    ADD COLUMN lease_expires_at timestamptz,
    ADD COLUMN attempts         integer NOT NULL DEFAULT 0;

CREATE INDEX runs_inline_unfinished ON runs (created_at)
    WHERE mode = 'inline' AND status IN ('queued', 'running');

-- The recovery sweep's scan: pointers to the unfinished inline runs of every org that may have lost their
-- worker — the lease expired (or was never set: runs from before leases), or it is held by a process on
-- `host_prefix` (the caller checks whether that process still exists). Their content stays behind RLS.
CREATE FUNCTION pa_unattended_runs(host_prefix text, max_rows integer)
RETURNS TABLE (org_id uuid, run_id uuid, lease_owner text, expired boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT r.org_id, r.id, r.lease_owner, coalesce(r.lease_expires_at < now(), true)
    FROM runs r
    WHERE r.mode = 'inline' AND r.status IN ('queued', 'running')
      AND (r.lease_expires_at IS NULL OR r.lease_expires_at < now()
           OR (host_prefix <> '' AND starts_with(r.lease_owner, host_prefix)))
    ORDER BY r.created_at
    LIMIT max_rows
$$;
-- Under FORCE RLS the owner is filtered too (outside superuser setups such as RDS): let the owner role,
-- which only this SECURITY DEFINER function runs as, read the runs it scans.
CREATE POLICY owner_recovery_scan ON runs FOR SELECT TO CURRENT_USER USING (true);
