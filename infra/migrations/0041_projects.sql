-- Projects (issue 38, item 2): a project groups chats and carries shared instructions, a default agent, its own
-- knowledge collection (its files) and its own memory scope. Members are owners, editors or viewers; every member
-- sees the project's chats, editors and owners also write in them and move chats in and out, owners change the
-- project and its members. The service checks the roles; the org boundary is RLS as everywhere.
CREATE TABLE projects (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id         uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    name           text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 100),
    instructions   text NOT NULL DEFAULT '' CHECK (length(instructions) <= 8000),
    agent_id       uuid REFERENCES agents(id) ON DELETE SET NULL,
    collection_id  uuid REFERENCES knowledge_collections(id) ON DELETE SET NULL,
    own_collection boolean NOT NULL DEFAULT false,  -- made for the project: its members follow the project's
    created_by     uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_org ON projects (org_id, updated_at DESC);
SELECT pa_enable_tenant_rls('projects');

CREATE TABLE project_members (
    project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user ON project_members (org_id, user_id);
SELECT pa_enable_tenant_rls('project_members');

-- A chat in a project (NULL: none). Deleting a project moves its chats out; they stay their owners'.
ALTER TABLE chats ADD COLUMN project_id uuid REFERENCES projects(id) ON DELETE SET NULL;
CREATE INDEX chats_project ON chats (project_id, updated_at DESC) WHERE project_id IS NOT NULL;

-- A memory saved in a project's chat belongs to that project's scope: recalled only in its chats (and a person's
-- memories from outside are not recalled there). They go with the project.
ALTER TABLE memories ADD COLUMN project_id uuid REFERENCES projects(id) ON DELETE CASCADE;
