-- Edit and branch: a chat's messages form a tree. Each message continues from its parent (NULL: a first turn);
-- editing a turn or regenerating an answer adds a sibling, and one branch is the path from a root to a leaf.
-- Existing chats stay linear: each message's parent is the chat's previous message.
ALTER TABLE messages ADD COLUMN parent_id bigint REFERENCES messages(id) ON DELETE CASCADE;

-- The backfill reads every org's rows: as the table's owner, with RLS not forced for this statement only.
ALTER TABLE messages NO FORCE ROW LEVEL SECURITY;
UPDATE messages m SET parent_id = prev.parent_id
FROM (SELECT id, lag(id) OVER (PARTITION BY chat_id ORDER BY id) AS parent_id FROM messages) prev
WHERE prev.id = m.id AND prev.parent_id IS NOT NULL;
ALTER TABLE messages FORCE ROW LEVEL SECURITY;

CREATE INDEX messages_parent ON messages (chat_id, parent_id, id);

-- Long chats fit the model: older turns of a branch are summarised by the routing model into a `summary` row that
-- hangs off the last message it covers (never a parent itself, so branches, siblings and leaves ignore it).
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check CHECK (kind IN ('request', 'response', 'summary'));
CREATE INDEX messages_summaries ON messages (chat_id, parent_id) WHERE kind = 'summary';

-- An org's own model may say how many tokens it reads in one request (NULL: 128k, the platform's assumption).
ALTER TABLE provider_models ADD COLUMN context_window integer CHECK (context_window BETWEEN 512 AND 10000000);
