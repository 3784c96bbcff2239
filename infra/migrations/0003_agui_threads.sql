-- AG-UI clients name their own thread ids; a chat remembers the one it serves.
ALTER TABLE chats ADD COLUMN external_thread_id text;
CREATE UNIQUE INDEX chats_external_thread ON chats (org_id, user_id, external_thread_id)
    WHERE external_thread_id IS NOT NULL;
