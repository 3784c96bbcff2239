-- An org may let its runs' exported traces carry message content (issue 37 item 5): prompts, answers, tool arguments
-- and results in the OpenTelemetry spans. Off unless the org's admin turns it on, and even then only where the
-- operator allows it (`PA_OTEL_CONTENT`) and never for a restricted chat (`otel_export.content_allowed`).
ALTER TABLE org_settings ADD COLUMN trace_content boolean NOT NULL DEFAULT false;
