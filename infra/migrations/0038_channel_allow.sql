-- Who may use a channel (issue 34): an allow-list of roles and members per org channel. Both empty (the default):
-- every member of the org. A linked member outside a non-empty list gets one short refusal and nothing runs.
ALTER TABLE channel_configs
    ADD COLUMN allowed_roles text[] NOT NULL DEFAULT '{}'
        CHECK (allowed_roles <@ ARRAY['admin', 'org-admin', 'user']::text[] AND cardinality(allowed_roles) <= 3),
    ADD COLUMN allowed_users uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(allowed_users) <= 500);
