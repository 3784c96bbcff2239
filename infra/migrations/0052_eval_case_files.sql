-- Files of an evaluation case (issue 37): a case carries files like a chat message carries attachments (a CSV whose
-- figures the expected answer depends on). They belong to the org, not to a person: any admin of the org edits the
-- dataset. The object lives in the documents bucket under `eval-files/{org_id}/{file_id}/{name}` (outside the
-- `documents/` prefix the ingest queue listens on); the row goes with its case and its dataset (the API deletes the
-- objects of the rows it deletes). When an evaluation runs the case, each file is copied into the case's chat as an
-- attachment of the run.
CREATE TABLE eval_case_files (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id        uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    case_id       uuid NOT NULL REFERENCES eval_cases(id) ON DELETE CASCADE,
    filename      text NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
    content_type  text NOT NULL,
    size          bigint NOT NULL CHECK (size > 0),
    object_key    text NOT NULL UNIQUE,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX eval_case_files_case ON eval_case_files (case_id, created_at);
SELECT pa_enable_tenant_rls('eval_case_files');
