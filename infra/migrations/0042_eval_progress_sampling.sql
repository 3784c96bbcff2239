-- Evaluations, feedback and online sampling, second part (issue 37).

-- A message the agent posted in a channel and the run whose answer it carries (a Slack message's `channel:ts`, a
-- Telegram message's `chat_id:message_id`), so a reaction to it is feedback on that run.
CREATE TABLE channel_posts (
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('slack', 'telegram')),
    message_key  text NOT NULL CHECK (length(message_key) BETWEEN 1 AND 300),
    run_id       uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, kind, message_key)
);
SELECT pa_enable_tenant_rls('channel_posts');

-- Where each case of an evaluation run is: `pending` (not launched), `running` (its run), `judging` (its LLM
-- judge's run), `done` (its `eval_results` row written). The runs' ends move it on (the outbox's `eval_run_ended`
-- pointer), not a task in the process that accepted the evaluation. No foreign keys to `runs`: a judge's run lives
-- in a temporary chat and goes with it.
CREATE TABLE eval_case_runs (
    eval_run_id   uuid NOT NULL REFERENCES eval_runs(id) ON DELETE CASCADE,
    case_id       uuid NOT NULL REFERENCES eval_cases(id) ON DELETE CASCADE,
    org_id        uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'judging', 'done')),
    run_id        uuid,
    judge_run_id  uuid,
    started_at    timestamptz,
    PRIMARY KEY (eval_run_id, case_id)
);
CREATE INDEX eval_case_runs_run ON eval_case_runs (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX eval_case_runs_judge ON eval_case_runs (judge_run_id) WHERE judge_run_id IS NOT NULL;
SELECT pa_enable_tenant_rls('eval_case_runs');

-- The dev server's sweep (and a restart's) over evaluations not ended, across orgs: pointers only; each is then
-- advanced in its org's transaction.
CREATE FUNCTION pa_unended_evals(max_rows integer)
RETURNS TABLE (org_id uuid, eval_run_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT e.org_id, e.id FROM eval_runs e WHERE e.status IN ('queued', 'running') ORDER BY e.created_at
    LIMIT max_rows
$$;
CREATE POLICY owner_eval_scan ON eval_runs FOR SELECT TO CURRENT_USER USING (true);

-- Online sampling: an org samples `rate` (0 to 1; none: off) of an agent's production runs into an LLM judge with
-- its rubric (and a model of its own, else the run's routing model).
CREATE TABLE agent_sampling (
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    agent_slug  text NOT NULL CHECK (agent_slug ~ '^[a-z0-9-]{2,64}$'),
    rate        double precision NOT NULL CHECK (rate >= 0 AND rate <= 1),
    rubric      text NOT NULL DEFAULT '' CHECK (length(rubric) <= 4000),
    model       text,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, agent_slug)
);
SELECT pa_enable_tenant_rls('agent_sampling');

-- A sampled production run and its judge's score (0 to 1) once the judge's run ended; the agent version and model
-- copied from the run so the figures survive edits and the run's deletion.
CREATE TABLE online_scores (
    run_id         uuid PRIMARY KEY,
    org_id         uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    agent_slug     text NOT NULL,
    agent_version  integer,
    model          text,
    judge_run_id   uuid,
    status         text NOT NULL DEFAULT 'judging' CHECK (status IN ('judging', 'scored', 'failed')),
    score          double precision CHECK (score >= 0 AND score <= 1),
    cost_usd       numeric(18, 8) NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    scored_at      timestamptz
);
CREATE INDEX online_scores_judge ON online_scores (judge_run_id) WHERE judge_run_id IS NOT NULL;
CREATE INDEX online_scores_org_time ON online_scores (org_id, created_at DESC);
SELECT pa_enable_tenant_rls('online_scores');
