-- A large source syncs in bounded chunks (issue 36): a sync lists the source once and marks each listed item with
-- the sync's id (and the listing's ETag); then each ingest-function invocation brings at most
-- PA_KNOWLEDGE_SYNC_CHUNK items in step (`done_in`), or removes as many unlisted ones, and queues the next chunk
-- itself. `sync_cursor` is the sync in progress (its id, when it started and last moved, its counts and errors so
-- far); NULL: none. A sync that stopped moving is started again by the next request or schedule.
ALTER TABLE knowledge_sources ADD COLUMN sync_cursor jsonb;
ALTER TABLE knowledge_source_items
    ADD COLUMN listed_in uuid,
    ADD COLUMN listed_etag text,
    ADD COLUMN done_in uuid;
CREATE INDEX knowledge_source_items_listed ON knowledge_source_items (source_id, listed_in, item_key);
