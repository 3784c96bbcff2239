-- A person's own preferences in an org (the default model of their runs).
CREATE TABLE user_settings (
    org_id         uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id        uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    default_model  text,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);
ALTER TABLE user_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE user_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON user_settings USING (org_id = pa_current_org()) WITH CHECK (org_id = pa_current_org());
