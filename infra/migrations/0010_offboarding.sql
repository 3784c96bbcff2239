-- Offboarding. An org admin can disable a membership (reversible) or remove it; a removed membership
-- stays as a tombstone so a token whose IdP still names the org cannot silently re-create it. A
-- platform admin can disable a user everywhere. Nothing here deletes a person's chats, runs or usage.
ALTER TABLE users ADD COLUMN disabled_at timestamptz;

ALTER TABLE memberships
    ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'removed')),
    ADD COLUMN status_changed_at timestamptz,
    ADD COLUMN status_changed_by uuid REFERENCES users(id) ON DELETE SET NULL;
