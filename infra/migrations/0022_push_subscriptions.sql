-- Web Push: the browsers (one row per push endpoint) where a person asked to hear of their runs' approvals. A
-- subscription belongs to one user in one org: besides the org policy, a RESTRICTIVE policy requires
-- app.current_user to name its owner (as memories, 0016), so nobody else reads or removes it. `p256dh` and
-- `auth` are the browser's public key and auth secret (base64url): what the message is encrypted to.
CREATE TABLE push_subscriptions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id      uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    endpoint    text NOT NULL CHECK (length(endpoint) BETWEEN 12 AND 2048),
    p256dh      text NOT NULL CHECK (length(p256dh) BETWEEN 80 AND 100),
    auth        text NOT NULL CHECK (length(auth) BETWEEN 16 AND 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, user_id, endpoint)
);
CREATE INDEX push_subscriptions_owner ON push_subscriptions (org_id, user_id, created_at);
SELECT pa_enable_tenant_rls('push_subscriptions');
CREATE POLICY push_owner ON push_subscriptions AS RESTRICTIVE
    USING (user_id = pa_current_user()) WITH CHECK (user_id = pa_current_user());
