-- A webhook or schedule aimed at a busy workflow chat is queued as a follow-up (issue 33): its run id is known before
-- the run exists, so the delivery keeps it in `queued_run_id` (no foreign key: the run is stored when it starts),
-- and the run's outputs still find their workflow by it.
ALTER TABLE workflow_deliveries ADD COLUMN queued_run_id uuid;
CREATE INDEX workflow_deliveries_queued_run ON workflow_deliveries (queued_run_id) WHERE queued_run_id IS NOT NULL;
