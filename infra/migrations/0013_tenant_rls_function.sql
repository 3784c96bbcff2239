-- One call makes a table tenant-owned: RLS enabled and FORCED (the owner is filtered too, outside superuser
-- setups), and the `tenant_isolation` policy that lets a session see and write only the rows of the org in
-- app.current_org (nothing when it is unset). Migrations 0001-0012 spelled this out per table; later ones
-- call `SELECT pa_enable_tenant_rls('new_table');` right after CREATE TABLE (infra/migrations/README.md).
CREATE FUNCTION pa_enable_tenant_rls(tbl regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- regclass prints as a quoted (and, off the search path, schema-qualified) name: safe to format with %s.
    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', tbl);
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', tbl);
    EXECUTE format('CREATE POLICY tenant_isolation ON %s USING (org_id = pa_current_org()) '
                   'WITH CHECK (org_id = pa_current_org())', tbl);
END $$;

-- Only migrations (the owner) call it; the app role has no business changing a table's security.
REVOKE EXECUTE ON FUNCTION pa_enable_tenant_rls(regclass) FROM PUBLIC;
