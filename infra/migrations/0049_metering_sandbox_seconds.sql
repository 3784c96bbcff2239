-- The operator's metering export carries the sandbox seconds (`run_python`, issue 40): what each org's code held a
-- sandbox for in [since, until), summed from the sandbox's meter (sandbox_usage, 0031).

-- Under FORCE RLS the owner is filtered too (outside superuser setups such as RDS): let the owner role, which only
-- the SECURITY DEFINER function below runs as, read the meter for the sums (as platform_totals on usage_records).
CREATE POLICY platform_totals ON sandbox_usage FOR SELECT TO CURRENT_USER USING (true);

CREATE FUNCTION pa_metering_sandbox(since timestamptz, until timestamptz)
RETURNS TABLE (org_id uuid, org_slug text, sandbox_calls bigint, sandbox_seconds numeric)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT s.org_id, o.slug, count(*), sum(s.seconds)
    FROM sandbox_usage s JOIN orgs o ON o.id = s.org_id
    WHERE s.created_at >= since AND s.created_at < until
    GROUP BY s.org_id, o.slug
    ORDER BY o.slug
$$;
-- As the other metering sums (0025): not for PUBLIC, only for `pa_metering` (granted to the exporter's role).
REVOKE EXECUTE ON FUNCTION pa_metering_sandbox(timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pa_metering_sandbox(timestamptz, timestamptz) TO pa_metering;
