-- Agents (issue 31): a named configuration (instructions, model, tools, knowledge, memory, delegates, starter
-- prompts, stricter approvals, a classification floor, an output schema) people build once and use from every
-- entry point. `agents` holds what is not versioned (the slug, who owns it, who sees it, which version runs);
-- `agent_versions` holds each immutable version's configuration as JSON (`agents.config.AgentConfig`).
-- `owner_id` NULL: the org's built-in `assistant`. Visibility (private: the owner only) is checked by the
-- service; the org boundary is RLS as everywhere.
CREATE TABLE agents (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id            uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    owner_id          uuid REFERENCES users(id) ON DELETE SET NULL,
    slug              text NOT NULL CHECK (slug ~ '^[a-z0-9-]{2,64}$'),
    visibility        text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'org')),
    builtin           boolean NOT NULL DEFAULT false,
    published_version integer NOT NULL DEFAULT 1 CHECK (published_version >= 1),
    latest_version    integer NOT NULL DEFAULT 1 CHECK (latest_version >= 1),
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, slug),
    CHECK (published_version <= latest_version)
);
CREATE INDEX agents_owner ON agents (org_id, owner_id);
SELECT pa_enable_tenant_rls('agents');

CREATE TABLE agent_versions (
    agent_id    uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    version     integer NOT NULL CHECK (version >= 1),
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    config      jsonb NOT NULL,
    created_by  uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, version)
);
SELECT pa_enable_tenant_rls('agent_versions');

-- A chat bound to an agent: its runs use the agent's published version at each launch.
ALTER TABLE chats ADD COLUMN agent_id uuid REFERENCES agents(id) ON DELETE SET NULL;

-- A workflow may name the agent its runs use (by slug; its own instructions, model and tools override the agent's).
ALTER TABLE workflows ADD COLUMN agent text CHECK (agent ~ '^[a-z0-9-]{2,64}$');
