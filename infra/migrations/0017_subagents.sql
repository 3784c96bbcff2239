-- Sub-agents (issue 16): a run's children are runs with `parent_run_id`. Their usage rows carry the parent
-- and the root of their tree, so the ledger attributes every child request to the run that delegated it
-- (and keeps doing so after the runs are deleted: the ledger outlives them).
ALTER TABLE usage_records ADD COLUMN parent_run_id uuid, ADD COLUMN root_run_id uuid;
CREATE INDEX usage_records_root ON usage_records (org_id, root_run_id) WHERE root_run_id IS NOT NULL;

-- A parent's children, for the run view, the cancel cascade and the check that a round of them ended.
CREATE INDEX runs_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;

-- The Step Functions task token of a durable parent's `WaitForChildren` state: the last child to end sends
-- it (`SendTaskSuccess`), so the parent waits on its children without a Lambda running.
ALTER TABLE runs ADD COLUMN children_task_token text;
