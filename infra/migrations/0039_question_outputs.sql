-- Workflow outputs carry a run's `ask_user` questions too (issue 33: a question answered "from a link in an e-mail
-- or Slack output"): the delivery log's event may be `question.asked`. An output asks for it by name, or gets it
-- with `approval.requested` (both wait for a person); new outputs subscribe to all three by default.
ALTER TABLE workflow_output_deliveries DROP CONSTRAINT workflow_output_deliveries_event_check;
ALTER TABLE workflow_output_deliveries
    ADD CONSTRAINT workflow_output_deliveries_event_check
    CHECK (event IN ('run.finished', 'approval.requested', 'question.asked'));
ALTER TABLE workflow_outputs ALTER COLUMN events SET DEFAULT ARRAY['run.finished', 'approval.requested', 'question.asked'];
