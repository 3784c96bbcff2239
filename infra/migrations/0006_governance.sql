-- Governance: providers and models per org with trust tiers, org routing settings, budgets,
-- and what a run chose and which model answered.
CREATE TABLE org_settings (
    org_id                uuid PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
    tier_floor            integer NOT NULL DEFAULT 0 CHECK (tier_floor BETWEEN 0 AND 2),
    confidence_threshold  numeric(4, 3) NOT NULL DEFAULT 0.8 CHECK (confidence_threshold BETWEEN 0 AND 1),
    routing_model         text,          -- the cheap model that classifies requests; NULL = auto
    default_model         text,
    updated_at            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE providers (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,40}$'),
    kind         text NOT NULL CHECK (kind IN ('openai', 'anthropic', 'bedrock', 'openai-compatible')),
    base_url     text,
    trust_tier   integer NOT NULL CHECK (trust_tier BETWEEN 0 AND 2),
    locality     text NOT NULL DEFAULT 'remote',      -- local | region | remote
    key_id       uuid REFERENCES provider_keys(id) ON DELETE SET NULL,   -- NULL: the platform's key
    enabled      boolean NOT NULL DEFAULT true,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, name)
);

CREATE TABLE provider_models (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id        uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    provider_id   uuid NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    name          text NOT NULL,
    tags          text[] NOT NULL DEFAULT '{}'
                  CHECK (tags <@ ARRAY['frontier', 'coding', 'reasoning', 'vision', 'fast', 'cheap']),
    quality       integer NOT NULL DEFAULT 10 CHECK (quality BETWEEN 0 AND 20),
    input_price   numeric(12, 6),   -- USD per million tokens; NULL = from genai-prices
    output_price  numeric(12, 6),
    enabled       boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (provider_id, name)
);

CREATE TABLE budgets (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id        uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    scope         text NOT NULL CHECK (scope IN ('org', 'user')),
    user_id       uuid REFERENCES users(id) ON DELETE CASCADE,
    monthly_usd   numeric(16, 6) NOT NULL CHECK (monthly_usd >= 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    CHECK ((scope = 'user') = (user_id IS NOT NULL))
);
CREATE UNIQUE INDEX budgets_one_per_scope ON budgets (org_id, scope, coalesce(user_id, '00000000-0000-0000-0000-000000000000'));

ALTER TABLE chats DROP CONSTRAINT IF EXISTS chats_classification_check;
ALTER TABLE chats ADD CONSTRAINT chats_classification_check
    CHECK (classification IN ('standard', 'confidential', 'restricted'));
ALTER TABLE runs ADD COLUMN model_chain jsonb, ADD COLUMN answered_model text, ADD COLUMN routing jsonb;

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['org_settings', 'providers', 'provider_models', 'budgets']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = pa_current_org()) '
                       'WITH CHECK (org_id = pa_current_org())', t);
    END LOOP;
END $$;

-- The platform-wide cap needs every org's spend this month; only this total crosses tenants.
CREATE FUNCTION pa_platform_spend_since(since timestamptz) RETURNS numeric
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT coalesce(sum(cost_usd), 0) FROM usage_records WHERE created_at >= since
$$;
-- Under FORCE RLS the owner is filtered too (outside superuser setups such as RDS): let the owner
-- role, which only this SECURITY DEFINER function runs as, read the ledger for the total.
CREATE POLICY platform_totals ON usage_records FOR SELECT TO CURRENT_USER USING (true);
