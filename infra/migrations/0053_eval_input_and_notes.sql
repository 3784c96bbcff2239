-- An evaluation case's input is a string or a list of messages (`[{role, content}]`, issue 37 item 2), and a
-- result carries why a scorer gave what it gave (e.g. `{"judge": "judge_refused: ..."}`). Each gets a column of its
-- own: `eval_cases.input` becomes jsonb (a JSON string or array), `eval_results.notes` a jsonb object. Rows written
-- before (the input as text, a list as `pa-messages:` and its JSON; notes under `_notes` inside `scores`) move.
ALTER TABLE eval_cases DROP CONSTRAINT eval_cases_input_check;
ALTER TABLE eval_cases ALTER COLUMN input TYPE jsonb USING (
    CASE WHEN input LIKE 'pa-messages:%' THEN substr(input, length('pa-messages:') + 1)::jsonb ELSE to_jsonb(input) END
);
ALTER TABLE eval_cases ADD CONSTRAINT eval_cases_input_check
    CHECK (jsonb_typeof(input) IN ('string', 'array') AND length(input::text) BETWEEN 3 AND 200000);

ALTER TABLE eval_results ADD COLUMN notes jsonb NOT NULL DEFAULT '{}'::jsonb;
UPDATE eval_results SET notes = scores -> '_notes', scores = scores - '_notes' WHERE scores ? '_notes';
