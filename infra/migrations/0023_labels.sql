-- Governance labels travel with the data (spec/labels.py): a chat carries the highest classification tier of
-- anything that entered it and whether anything untrusted did; a memory carries the tier of the chat it was saved
-- in. Both only go up (the app raises them with greatest()/OR, never lowers them).
ALTER TABLE chats ADD COLUMN content_tier smallint NOT NULL DEFAULT 0 CHECK (content_tier BETWEEN 0 AND 2);
ALTER TABLE chats ADD COLUMN untrusted boolean NOT NULL DEFAULT false;
ALTER TABLE memories ADD COLUMN content_tier smallint NOT NULL DEFAULT 0 CHECK (content_tier BETWEEN 0 AND 2);

-- Chats that ran before labels existed: what entered them did so under their classification.
UPDATE chats c SET content_tier = CASE c.classification WHEN 'standard' THEN 0 WHEN 'confidential' THEN 1 ELSE 2 END
WHERE EXISTS (SELECT 1 FROM runs r WHERE r.chat_id = c.id);

-- One run at a time on a chat (launch refuses a second with 409 `run_in_progress`): finds the active one fast.
CREATE INDEX runs_active_per_chat ON runs (chat_id)
    WHERE parent_run_id IS NULL AND status NOT IN ('succeeded', 'failed', 'cancelled', 'skipped');
