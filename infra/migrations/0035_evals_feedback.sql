-- Feedback on answers, evaluation datasets and evaluation runs (issue 37).
--
-- `run_feedback`: a person's thumbs up/down (and comment) on one answer (a run), one per person and answer,
-- changeable; the agent version and model it judges are copied from the run so the figures survive agent edits.
CREATE TABLE run_feedback (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id         uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    run_id         uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    user_id        uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    rating         smallint NOT NULL CHECK (rating IN (-1, 1)),
    comment        text NOT NULL DEFAULT '' CHECK (length(comment) <= 2000),
    agent_slug     text,
    agent_version  integer,
    model          text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (run_id, user_id)
);
CREATE INDEX run_feedback_org_time ON run_feedback (org_id, updated_at DESC);
SELECT pa_enable_tenant_rls('run_feedback');

-- A dataset: named cases an evaluation runs an agent (or a model) over.
CREATE TABLE eval_datasets (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_by  uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, name)
);
SELECT pa_enable_tenant_rls('eval_datasets');

CREATE TABLE eval_cases (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id         uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    dataset_id     uuid NOT NULL REFERENCES eval_datasets(id) ON DELETE CASCADE,
    position       integer NOT NULL,
    input          text NOT NULL CHECK (length(input) BETWEEN 1 AND 100000),
    expected       text CHECK (length(expected) <= 100000),
    criteria       text CHECK (length(criteria) <= 4000),
    tags           text[] NOT NULL DEFAULT '{}',
    source_run_id  uuid REFERENCES runs(id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (dataset_id, position)
);
SELECT pa_enable_tenant_rls('eval_cases');

-- An evaluation run: one agent version (or model) over a dataset's cases, each case a normal metered run.
CREATE TABLE eval_runs (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    dataset_id   uuid NOT NULL REFERENCES eval_datasets(id) ON DELETE CASCADE,
    created_by   uuid REFERENCES users(id) ON DELETE SET NULL,
    agent        text,
    version      integer,
    model        text,
    budget_usd   numeric(18, 8) NOT NULL CHECK (budget_usd > 0),
    scorers      jsonb NOT NULL,
    status       text NOT NULL DEFAULT 'queued'
                 CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'budget_exhausted')),
    error        jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);
CREATE INDEX eval_runs_org_time ON eval_runs (org_id, created_at DESC);
SELECT pa_enable_tenant_rls('eval_runs');

-- One case's result in an evaluation run: the run that answered it, the answer, each scorer's score.
CREATE TABLE eval_results (
    eval_run_id  uuid NOT NULL REFERENCES eval_runs(id) ON DELETE CASCADE,
    case_id      uuid NOT NULL REFERENCES eval_cases(id) ON DELETE CASCADE,
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    run_id       uuid REFERENCES runs(id) ON DELETE SET NULL,
    status       text NOT NULL,
    answer       text NOT NULL DEFAULT '',
    scores       jsonb NOT NULL DEFAULT '{}'::jsonb,
    score        double precision NOT NULL DEFAULT 0,
    cost_usd     numeric(18, 8) NOT NULL DEFAULT 0,
    latency_ms   integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (eval_run_id, case_id)
);
SELECT pa_enable_tenant_rls('eval_results');
