-- Metering for billing: each tenant stack exports its usage once per period (an hour, a month) to the operator's
-- bucket and bus. This table is the exports' ledger and their idempotency key: one row per (kind, period_start),
-- written in the same transaction as the export, so a redelivered or repeated export finds its row and does
-- nothing. It is the platform's own record (no org_id, no tenant content: totals only).
CREATE TABLE metering_exports (
    period_kind   text NOT NULL CHECK (period_kind IN ('hour', 'month')),
    period_start  timestamptz NOT NULL,
    period_end    timestamptz NOT NULL CHECK (period_end > period_start),
    object_key    text NOT NULL,
    export_id     text NOT NULL UNIQUE,
    totals        jsonb NOT NULL,
    exported_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (period_kind, period_start)
);

-- What the exporter reads: every org's usage and runs in [since, until), as totals per org and model. The app
-- role cannot read across orgs (forced RLS); these SECURITY DEFINER functions run as the owner, whose
-- platform_totals (usage_records) and owner_recovery_scan (runs) policies let it, and return sums only.
CREATE FUNCTION pa_metering_usage(since timestamptz, until timestamptz)
RETURNS TABLE (org_id uuid, org_slug text, model_name text, provider text, requests bigint, input_tokens bigint,
               output_tokens bigint, cache_read_tokens bigint, cache_write_tokens bigint, cost_usd numeric,
               unpriced_requests bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT u.org_id, o.slug, u.model_name, coalesce(u.provider, ''), count(*), sum(u.input_tokens),
           sum(u.output_tokens), sum(u.cache_read_tokens), sum(u.cache_write_tokens), coalesce(sum(u.cost_usd), 0),
           count(*) FILTER (WHERE u.cost_usd IS NULL)
    FROM usage_records u JOIN orgs o ON o.id = u.org_id
    WHERE u.created_at >= since AND u.created_at < until
    GROUP BY u.org_id, o.slug, u.model_name, coalesce(u.provider, '')
    ORDER BY o.slug, u.model_name, 4
$$;

CREATE FUNCTION pa_metering_runs(since timestamptz, until timestamptz)
RETURNS TABLE (org_id uuid, org_slug text, runs bigint, inline_runs bigint, durable_runs bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT r.org_id, o.slug, count(*), count(*) FILTER (WHERE r.mode = 'inline'),
           count(*) FILTER (WHERE r.mode = 'durable')
    FROM runs r JOIN orgs o ON o.id = r.org_id
    WHERE r.created_at >= since AND r.created_at < until
    GROUP BY r.org_id, o.slug
    ORDER BY o.slug
$$;
