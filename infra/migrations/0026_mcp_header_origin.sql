-- Issue 28, item 5: an MCP server's sealed auth headers are bound to the origin (scheme://host:port) they were
-- entered for. The origin is part of their KMS encryption context and AES-GCM associated data, and is recorded
-- here: changing the server's URL to another origin drops the headers, so a secret never reaches a server the
-- admin chose afterwards. Headers sealed before this migration (no origin recorded) keep their old binding to
-- the server's id and are dropped the same way on an origin change.
ALTER TABLE mcp_servers ADD COLUMN headers_origin text CHECK (length(headers_origin) <= 2100);
ALTER TABLE mcp_servers ADD CONSTRAINT mcp_servers_headers_origin_sealed
    CHECK (headers_origin IS NULL OR ciphertext IS NOT NULL);
