-- An org admin's erase of an offboarded member's content (issue 38): whose content, who erased it, when, and how
-- much went (counts, never content). Append-only. The member's usage ledger rows and the approval audit stay: they
-- hold no content and reference none of what was erased. `user_id` has no foreign key, so the record outlives the
-- account.
CREATE TABLE member_erasures (
    id         bigserial PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id    uuid NOT NULL,
    erased_by  uuid NOT NULL,
    chats      integer NOT NULL,
    memories   integer NOT NULL,
    files      integer NOT NULL,
    exports    integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX member_erasures_org_time ON member_erasures (org_id, created_at DESC);
SELECT pa_enable_tenant_rls('member_erasures');
CREATE TRIGGER member_erasures_append_only BEFORE UPDATE OR DELETE ON member_erasures
    FOR EACH ROW EXECUTE FUNCTION pa_append_only();
