-- An approval belongs to one round of a run (the checkpoint it paused at), not to a tool-call id alone:
-- some OpenAI-compatible servers reuse ids such as `call_0` in every response, and a second round's call
-- must get its own pending approval instead of finding the first round's decided one (the run then waited forever).
ALTER TABLE approvals DROP CONSTRAINT IF EXISTS approvals_run_id_tool_call_id_key;
ALTER TABLE approvals ADD CONSTRAINT approvals_run_round_call UNIQUE (run_id, checkpoint_seq, tool_call_id);
