-- Tool policies over arguments, review modes, approvals that need two people (issue 33, items 3-5).
--
-- `tool_policies`: an org admin's ordered rules `{tool (name or glob), when (CEL), effect, reason, log_only,
-- quorum}`; the first rule that matches a call decides it. Snapshotted into every RunSpec at launch.
CREATE TABLE tool_policies (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    position    integer NOT NULL CHECK (position >= 0),
    tool        text NOT NULL CHECK (length(tool) BETWEEN 1 AND 200),
    when_expr   text NOT NULL DEFAULT 'true' CHECK (length(when_expr) BETWEEN 1 AND 2000),
    effect      text NOT NULL CHECK (effect IN ('allow', 'ask', 'deny')),
    reason      text NOT NULL DEFAULT '' CHECK (length(reason) <= 500),
    log_only    boolean NOT NULL DEFAULT false,
    quorum      smallint NOT NULL DEFAULT 1 CHECK (quorum IN (1, 2)),
    created_by  uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tool_policies_order ON tool_policies (org_id, position);
SELECT pa_enable_tenant_rls('tool_policies');

-- The approval audit also records what a rule or the judge decided without a person (a log-only rule's "would
-- have", a deny): such a line names its run, call and rule, and has no approval row.
ALTER TABLE approval_audit ALTER COLUMN approval_id DROP NOT NULL,
    ADD COLUMN tool_call_id text,
    ADD COLUMN rule_id uuid;
CREATE INDEX approval_audit_rule ON approval_audit (org_id, rule_id, at) WHERE rule_id IS NOT NULL;

-- Approvals that need two people (`quorum` 2: two approvers, neither of them the requester), and escalation to
-- the org's admins when nobody decided by `escalate_at`.
ALTER TABLE approvals
    ADD COLUMN quorum smallint NOT NULL DEFAULT 1 CHECK (quorum IN (1, 2)),
    ADD COLUMN approvers uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN escalate_at timestamptz,
    ADD COLUMN escalated_at timestamptz;
CREATE INDEX approvals_escalation ON approvals (escalate_at) WHERE status = 'pending' AND escalated_at IS NULL;

-- A chat's review mode (NULL: its agent's, else `autonomous`).
ALTER TABLE chats ADD COLUMN review_mode text CHECK (review_mode IN ('autonomous', 'approve_each', 'judge'));

-- The escalation sweep's scan across orgs (pointers only; each approval is then read and changed in its org's
-- transaction), like `pa_unattended_runs`.
CREATE FUNCTION pa_due_escalations(max_rows integer)
RETURNS TABLE (org_id uuid, approval_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT a.org_id, a.id FROM approvals a
    WHERE a.status = 'pending' AND a.escalated_at IS NULL AND a.escalate_at <= now()
    ORDER BY a.escalate_at
    LIMIT max_rows
$$;
CREATE POLICY owner_escalation_scan ON approvals FOR SELECT TO CURRENT_USER USING (true);
