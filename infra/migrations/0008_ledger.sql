-- The ledger outlives deletions. Usage rows and the approval audit are append-only records: deleting a
-- chat or a run (which cascades to its approvals) keeps them, so budgets keep counting the spend and
-- /usage and the CSV export keep showing it. Only deleting the org itself removes them.

-- usage_records.run_id stays the run's id, and UNIQUE(run_id, request_index) stays the idempotency key,
-- but it no longer references runs: a run deleted with its chat (even mid-run) keeps, and can still
-- write, its rows.
ALTER TABLE usage_records DROP CONSTRAINT usage_records_run_id_fkey;

-- The audit keeps what it was about, so it still reads after the approval row is gone.
ALTER TABLE approval_audit DROP CONSTRAINT approval_audit_approval_id_fkey;
ALTER TABLE approval_audit ADD COLUMN run_id uuid, ADD COLUMN chat_id uuid, ADD COLUMN tool_name text;
UPDATE approval_audit a SET run_id = p.run_id, chat_id = p.chat_id, tool_name = p.tool_name
    FROM approvals p WHERE p.id = a.approval_id;
CREATE INDEX approval_audit_run ON approval_audit (org_id, run_id);

CREATE FUNCTION pa_audit_context() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.run_id IS NULL THEN
        SELECT p.run_id, p.chat_id, p.tool_name INTO NEW.run_id, NEW.chat_id, NEW.tool_name
        FROM approvals p WHERE p.id = NEW.approval_id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER approval_audit_context BEFORE INSERT ON approval_audit
    FOR EACH ROW EXECUTE FUNCTION pa_audit_context();

-- Append-only, enforced where every code path meets: no UPDATE, and no DELETE except the cascade that
-- removes a deleted org's rows (the org row is already gone when the cascade reaches them).
CREATE FUNCTION pa_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM orgs WHERE id = OLD.org_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER usage_records_append_only BEFORE UPDATE OR DELETE ON usage_records
    FOR EACH ROW EXECUTE FUNCTION pa_append_only();
CREATE TRIGGER approval_audit_append_only BEFORE UPDATE OR DELETE ON approval_audit
    FOR EACH ROW EXECUTE FUNCTION pa_append_only();
