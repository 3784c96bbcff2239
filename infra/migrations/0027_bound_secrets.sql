-- Secrets stay where they were entered (issue 28, items 5 and 11).
--
-- A BYOK provider key is bound to one endpoint (its provider's kind and base_url): `endpoint` says which, and the
-- KMS data key is wrapped with it in the encryption context, so a key decrypts for that endpoint only. NULL: not
-- attached to a provider yet (keys stored before this migration bind to their provider's endpoint on first use).
ALTER TABLE provider_keys ADD COLUMN endpoint text;

-- E-mail outputs go to the org's active members, or to addresses in these domains (lower-case, set by an org admin).
ALTER TABLE org_settings ADD COLUMN output_email_domains text[] NOT NULL DEFAULT '{}';
