-- MCP servers an org registers for its runs' tools: a streamable-HTTP URL (stdio only in local mode), a trust
-- tier, auth headers sealed like provider keys (KMS envelope; write-only), an allow-list of tool names, and per
-- tool whether it acts and who approves a call. The last discovery is cached on the row.
CREATE TABLE mcp_servers (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    name                text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,30}$'),
    url                 text NOT NULL CHECK (length(url) BETWEEN 1 AND 2000),
    transport           text NOT NULL DEFAULT 'http' CHECK (transport IN ('http', 'stdio')),
    trust_tier          integer NOT NULL CHECK (trust_tier BETWEEN 0 AND 2),
    ciphertext          bytea,
    nonce               bytea,
    encrypted_data_key  bytea,
    header_names        text[] NOT NULL DEFAULT '{}',
    allowed_tools       text[],           -- NULL: every tool the server lists
    tool_policies       jsonb NOT NULL DEFAULT '{}'::jsonb,
    enabled             boolean NOT NULL DEFAULT true,
    discovered          jsonb,            -- the last discovery: {"reachable", "tools" | "error"}
    discovered_at       timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, name),
    CHECK ((ciphertext IS NULL) = (encrypted_data_key IS NULL) AND (ciphertext IS NULL) = (nonce IS NULL))
);
SELECT pa_enable_tenant_rls('mcp_servers');
