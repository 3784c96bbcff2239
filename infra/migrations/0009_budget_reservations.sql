-- Budgets hold under concurrency: before each model request the engine reserves the request's estimated
-- cost (under a per-org, or platform-wide, advisory lock) and admits it only while spend plus live
-- reservations is under every applicable cap; recording the response's usage settles the reservation in
-- the same transaction. A reservation is released when its run ends (this trigger) and stops counting
-- at expires_at, so a worker that died mid-request does not hold budget forever.
CREATE TABLE budget_reservations (
    org_id         uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    run_id         uuid NOT NULL,         -- no FK: a run deleted mid-request still settles its reservation
    request_index  integer NOT NULL,
    user_id        uuid,
    amount_usd     numeric(18, 8) NOT NULL CHECK (amount_usd >= 0),
    expires_at     timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, request_index)
);
CREATE INDEX budget_reservations_org ON budget_reservations (org_id, expires_at);

ALTER TABLE budget_reservations ENABLE ROW LEVEL SECURITY;
ALTER TABLE budget_reservations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON budget_reservations USING (org_id = pa_current_org())
    WITH CHECK (org_id = pa_current_org());
-- The platform-wide cap sums every org's reservations in the SECURITY DEFINER function below only.
CREATE POLICY platform_totals ON budget_reservations FOR SELECT TO CURRENT_USER USING (true);

CREATE FUNCTION pa_release_run_reservations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM budget_reservations WHERE run_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER runs_release_reservations AFTER UPDATE OF status ON runs
    FOR EACH ROW WHEN (NEW.status IN ('succeeded', 'failed', 'cancelled', 'skipped')
                       AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION pa_release_run_reservations();

-- What the platform cap is measured against: every org's spend since `since` (a response nobody could
-- price counts at `unpriced_usd_per_mtok`) plus every live reservation but the caller's own.
CREATE FUNCTION pa_platform_committed(since timestamptz, unpriced_usd_per_mtok numeric, own_run uuid,
                                      own_index integer) RETURNS numeric
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT (SELECT coalesce(sum(coalesce(cost_usd, (input_tokens + output_tokens) * unpriced_usd_per_mtok / 1000000)), 0)
            FROM usage_records WHERE created_at >= since)
         + (SELECT coalesce(sum(amount_usd), 0) FROM budget_reservations
            WHERE expires_at > now() AND (run_id, request_index) IS DISTINCT FROM (own_run, own_index))
$$;

-- Replaced by pa_platform_committed (which also counts unpriced usage and live reservations).
DROP FUNCTION pa_platform_spend_since(timestamptz);
