-- A channel run's thread follower (issue 34, docs/channels.md): where its answer goes (the channel's reply, as the
-- message that started it gave it), how far the thread has been answered (`position`, the run's stream id), and
-- whether a follower reads it now (`held_until`; a follower lives at most PA_SSE_MAX_LIFETIME_SECONDS). A run
-- resumed later (an approval decided in the web chat or the channel, a question answered) starts a follower from
-- `position` when none holds it; `resumed` tells a follower that ends while holding it that the run went on.
CREATE TABLE channel_follows (
    run_id       uuid PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    org_id       uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('slack', 'telegram', 'email')),
    reply        jsonb NOT NULL,
    position     text,
    held_until   timestamptz,
    resumed      boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now()
);
SELECT pa_enable_tenant_rls('channel_follows');
