"""The one settings object. Every field maps to an environment variable documented in the README."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    """Runtime configuration, read from the environment (and `.env` when present)."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    environment: Literal["local", "aws", "test"] = Field("local", validation_alias=_env("PA_ENV"))
    data_dir: Path = Field(Path(".local"), validation_alias=_env("PA_DATA_DIR"))
    host: str = Field("127.0.0.1", validation_alias=_env("PA_HOST"))
    port: int = Field(8000, validation_alias=_env("PA_PORT"))
    # Processes serving `pa dev`'s port (`local.dev_processes`); 0: one per CPU.
    dev_processes: int = Field(1, ge=0, le=32, validation_alias=_env("PA_DEV_PROCESSES"))
    moto_port: int = Field(5055, validation_alias=_env("PA_MOTO_PORT"))
    # The local AWS emulator: moto in-process (default), or LocalStack from .tools/localstack (`make localstack`;
    # `pa dev --aws localstack`), whose durable-run Tasks are Step Functions Activities polled by the dev server.
    aws_emulator: Literal["moto", "localstack"] = Field("moto", validation_alias=_env("PA_AWS"))
    localstack_port: int = Field(4566, validation_alias=_env("PA_LOCALSTACK_PORT"))
    valkey_port: int = Field(6390, validation_alias=_env("PA_VALKEY_PORT"))
    log_level: str = Field("INFO", validation_alias=_env("PA_LOG_LEVEL", "POWERTOOLS_LOG_LEVEL"))

    # Postgres: the app connects as a role without BYPASSRLS; migrations run as the owner.
    database_url: str | None = Field(None, validation_alias=_env("DATABASE_URL"))
    database_admin_url: str | None = Field(None, validation_alias=_env("DATABASE_ADMIN_URL"))
    database_app_role: str = Field("pa_app", validation_alias=_env("PA_DATABASE_APP_ROLE"))
    database_app_password: str | None = Field(None, validation_alias=_env("PA_DATABASE_APP_PASSWORD"))
    database_pool_max: int = Field(10, validation_alias=_env("PA_DATABASE_POOL_MAX"))
    # Nothing waits on Postgres unbounded: a new connection gives up after `connect` seconds (libpq's minimum is 2), a
    # request for a pooled connection after `pool` seconds, a statement after `statement` seconds (0: no limit);
    # past any of them the caller gets `DependencyUnavailable` (an API request a 503 `dependency_unavailable`).
    database_connect_timeout_seconds: int = Field(5, ge=2, validation_alias=_env("PA_DATABASE_CONNECT_TIMEOUT_SECONDS"))
    database_pool_timeout_seconds: float = Field(10.0, gt=0, validation_alias=_env("PA_DATABASE_POOL_TIMEOUT_SECONDS"))
    database_statement_timeout_seconds: float = Field(
        30.0, ge=0, validation_alias=_env("PA_DATABASE_STATEMENT_TIMEOUT_SECONDS")
    )
    # psycopg prepares a statement server-side after its 5th run on a connection; behind a transaction pooler (RDS
    # Proxy, PgBouncer in transaction mode) that session state pins the connection, so there it is off (false).
    database_prepared_statements: bool = Field(True, validation_alias=_env("PA_DATABASE_PREPARED_STATEMENTS"))

    # Event bus: Redis/Valkey over TCP, or Upstash REST.
    redis_url: str | None = Field(None, validation_alias=_env("REDIS_URL"))
    upstash_url: str | None = Field(None, validation_alias=_env("UPSTASH_REDIS_REST_URL"))
    upstash_token: str | None = Field(None, validation_alias=_env("UPSTASH_REDIS_REST_TOKEN"))
    event_retention_seconds: int = Field(86_400, validation_alias=_env("PA_EVENT_RETENTION_SECONDS"))
    sse_heartbeat_seconds: float = Field(15.0, validation_alias=_env("PA_SSE_HEARTBEAT_SECONDS"))
    sse_max_lifetime_seconds: float = Field(840.0, validation_alias=_env("PA_SSE_MAX_LIFETIME_SECONDS"))
    event_stream_maxlen: int = Field(10_000, validation_alias=_env("PA_EVENT_STREAM_MAXLEN"))
    # Text and tool-argument deltas are appended in batches, one round trip each, this late (later while many runs
    # of the process stream: `engine.batch_window`; every other event sends the batch with it at once); 0 appends
    # every event on its own. 50 ms: a batch is one stream entry (one XADD), and a model streaming 80 tokens/s fills
    # 4 per window instead of 1 (Redis commands per 3-tool turn 1,670 -> ~510, bench/PROFILE.md "Issue 35"); a
    # message's first delta goes at once (`engine.emitter`), so the window never delays the first token.
    event_batch_ms: float = Field(50.0, ge=0, le=100, validation_alias=_env("PA_EVENT_BATCH_MS"))
    # How long a verified bearer token's principal is reused without asking the database again; a revocation
    # (PAT revoked, membership removed, account disabled) in this process ends it at once. 0: no cache.
    auth_cache_seconds: float = Field(5.0, ge=0, le=60, validation_alias=_env("PA_AUTH_CACHE_SECONDS"))
    # uvloop as the event loop of the dev server and the stream function (0: asyncio's own loop).
    fast_loop: bool = Field(True, validation_alias=_env("PA_FAST_LOOP"))
    # One XREAD per stream per process, shared by all its SSE clients (`stream.fanout`); 0: one per client.
    sse_fanout: bool = Field(True, validation_alias=_env("PA_SSE_FANOUT"))
    # SSE and AG-UI connections one user may hold open at once (all tabs, all orgs); one more is a 429.
    sse_max_connections_per_user: int = Field(10, ge=1, validation_alias=_env("PA_SSE_MAX_CONNECTIONS_PER_USER"))
    # Origins the web chat may fetch from besides its own (the CSP's connect-src), e.g. a Cognito hosted domain.
    web_connect_sources: str = Field("", validation_alias=_env("PA_WEB_CONNECT_SOURCES"))

    # AWS (moto in local mode unless AWS_ENDPOINT_URL points elsewhere).
    aws_endpoint_url: str | None = Field(None, validation_alias=_env("AWS_ENDPOINT_URL"))
    aws_region: str = Field("us-east-1", validation_alias=_env("AWS_REGION", "AWS_DEFAULT_REGION"))
    state_machine_arn: str | None = Field(None, validation_alias=_env("PA_STATE_MACHINE_ARN"))
    step_time_budget_seconds: float = Field(240.0, validation_alias=_env("PA_STEP_TIME_BUDGET_SECONDS"))
    # StepsTaskMode=activity: the steps activity the poller function works, the Task timeout its tasks have, and
    # how many tasks one poller runs at once.
    steps_activity_arn: str | None = Field(None, validation_alias=_env("PA_STEPS_ACTIVITY_ARN"))
    step_timeout_seconds: float = Field(300.0, gt=0, validation_alias=_env("PA_STEP_TIMEOUT_SECONDS"))
    activity_worker_threads: int = Field(4, ge=1, le=32, validation_alias=_env("PA_ACTIVITY_WORKER_THREADS"))
    approval_timeout_seconds: int = Field(86_400, validation_alias=_env("PA_APPROVAL_TIMEOUT_SECONDS"))
    # An approval nobody decided this long also goes to the org's admins (issue 33); 0: never escalated.
    approval_escalation_seconds: int = Field(3600, ge=0, validation_alias=_env("PA_APPROVAL_ESCALATION_SECONDS"))
    # Sub-agents of an inline run run as tasks in its worker, at most this many at once (docs/subagents.md).
    subagent_concurrency: int = Field(4, ge=1, le=64, validation_alias=_env("PA_SUBAGENT_CONCURRENCY"))
    run_worker_function: str = Field("pa-run-worker", validation_alias=_env("PA_RUN_WORKER_FUNCTION"))
    # Who drives an inline run: `auto` is this process in local mode and the run worker Lambda on AWS; `worker` is
    # the run worker everywhere (locally through moto's Lambda dispatch, the AWS shape on a laptop).
    inline_driver: Literal["auto", "worker"] = Field("auto", validation_alias=_env("PA_INLINE_DRIVER"))
    # An inline run started with its events in the response (`POST /chats/{id}/runs/stream`, AG-UI, streaming /v1,
    # A2A `message/stream`) is driven by the stream function answering it, not by the run worker while the stream
    # function waits on its events: one Lambda per streamed turn. Needs the engine in the stream function's layer.
    stream_drives_runs: bool = Field(True, validation_alias=_env("PA_STREAM_DRIVES_RUNS"))
    # Inline runs hold a lease while a worker drives them, renewed every third of its length; a run whose
    # lease expired lost its worker and is resumed from its last checkpoint, until it has been driven
    # `run_max_attempts` times in a row without finishing: then it ends failed (`worker_lost`). On AWS the lease
    # must stay shorter than the first async retry delay (60 s), so a retried invocation can take it over.
    run_lease_seconds: float = Field(30.0, gt=0, le=55, validation_alias=_env("PA_RUN_LEASE_SECONDS"))
    run_max_attempts: int = Field(3, ge=1, validation_alias=_env("PA_RUN_MAX_ATTEMPTS"))
    # How often the dev server looks for inline runs whose worker died (it also looks once at start).
    run_recovery_interval_seconds: float = Field(10.0, gt=0, validation_alias=_env("PA_RUN_RECOVERY_INTERVAL_SECONDS"))
    # How long a run waits out an unreachable bus or database (publishes, checkpoint and ledger writes retry with
    # backoff meanwhile); past it the run is paused at its last checkpoint, lease released, and recovery resumes it.
    dependency_retry_seconds: float = Field(60.0, ge=0, validation_alias=_env("PA_DEPENDENCY_RETRY_SECONDS"))

    # Workflow schedules on EventBridge Scheduler (the template sets these; local mode targets moto's
    # `pa-triggers` and the dev server's scheduler loop fires what is due).
    schedule_group: str = Field("personal-agent-local", validation_alias=_env("PA_SCHEDULE_GROUP"))
    scheduler_role_arn: str | None = Field(None, validation_alias=_env("PA_SCHEDULER_ROLE_ARN"))
    schedule_target_arn: str | None = Field(None, validation_alias=_env("PA_SCHEDULE_TARGET_ARN"))
    schedule_dlq_arn: str | None = Field(None, validation_alias=_env("PA_SCHEDULE_DLQ_ARN"))
    # Approval escalation on AWS: a one-time schedule per approval that can escalate invokes this function (the
    # run recovery function) with this role (`approvals/escalation_schedule.py`); unset, `pa dev`'s loop sweeps.
    escalation_target_arn: str | None = Field(None, validation_alias=_env("PA_ESCALATION_TARGET_ARN"))
    escalation_role_arn: str | None = Field(None, validation_alias=_env("PA_ESCALATION_ROLE_ARN"))
    local_scheduler_interval_seconds: float = Field(
        5.0, gt=0, validation_alias=_env("PA_LOCAL_SCHEDULER_INTERVAL_SECONDS")
    )
    # Retention (issue 38): how often `pa dev` sweeps temporary and expired chats (daily on AWS), and a skew of
    # the clock the sweep and share links' expiry read (tests move time forward with it instead of waiting).
    retention_interval_seconds: float = Field(3600.0, gt=0, validation_alias=_env("PA_RETENTION_INTERVAL_SECONDS"))
    retention_clock_skew_seconds: float = Field(0.0, validation_alias=_env("PA_RETENTION_CLOCK_SKEW_SECONDS"))
    # The function that builds data exports in the background (asynchronous invokes; `pa dev` names its in-process
    # stand-in); unset: a thread of the process that was asked.
    export_function: str = Field("", validation_alias=_env("PA_EXPORT_FUNCTION"))

    # Identity.
    oidc_issuer: str | None = Field(None, validation_alias=_env("PA_OIDC_ISSUER"))
    oidc_audience: str = Field("personal-agent", validation_alias=_env("PA_OIDC_AUDIENCE"))
    # The web chat's OIDC client (authorization code + PKCE); defaults to the audience (Cognito: the app client id).
    oidc_client_id: str | None = Field(None, validation_alias=_env("PA_OIDC_CLIENT_ID"))
    oidc_jwks_url: str | None = Field(None, validation_alias=_env("PA_OIDC_JWKS_URL"))
    # Where the audience lives: `aud` for OIDC ID/access tokens, `client_id` for Cognito access tokens.
    oidc_audience_claim: str = Field("aud", validation_alias=_env("PA_OIDC_AUDIENCE_CLAIM"))
    # Claim paths (dotted; a key containing dots, such as an Auth0 namespaced claim, is matched whole
    # first; several paths separated by commas are merged). Prefixes filter and strip group-style values.
    oidc_org_claim: str = Field("org", validation_alias=_env("PA_OIDC_ORG_CLAIM"))
    oidc_org_prefix: str = Field("", validation_alias=_env("PA_OIDC_ORG_PREFIX"))
    oidc_roles_claim: str = Field("roles", validation_alias=_env("PA_OIDC_ROLES_CLAIM"))
    oidc_role_prefix: str = Field("", validation_alias=_env("PA_OIDC_ROLE_PREFIX"))
    oidc_default_org: str | None = Field(None, validation_alias=_env("PA_OIDC_DEFAULT_ORG"))
    oidc_leeway_seconds: int = Field(60, ge=0, le=600, validation_alias=_env("PA_OIDC_LEEWAY_SECONDS"))
    oidc_jwks_cache_seconds: int = Field(600, ge=0, validation_alias=_env("PA_OIDC_JWKS_CACHE_SECONDS"))
    oidc_jwks_min_refresh_seconds: float = Field(30.0, ge=0, validation_alias=_env("PA_OIDC_JWKS_MIN_REFRESH_SECONDS"))
    # Orgs a valid token names but the database does not know yet are created on first use (all modes);
    # set false when orgs are provisioned ahead (the token then gets 403 unknown_org).
    auto_create_orgs: bool = Field(True, validation_alias=_env("PA_AUTO_CREATE_ORGS"))
    # The built-in dev issuer (local and test only; never trusted when PA_ENV=aws).
    dev_issuer: str = Field("urn:personal-agent:dev-issuer", validation_alias=_env("PA_DEV_ISSUER"))
    dev_token_ttl_seconds: int = Field(43_200, ge=60, validation_alias=_env("PA_DEV_TOKEN_TTL_SECONDS"))
    # The dev issuer is trusted only while PA_HOST is loopback; true keeps it on any address (anyone who
    # reaches the port can then sign in as anyone).
    dev_login_allow_remote: bool = Field(False, validation_alias=_env("PA_DEV_LOGIN_ALLOW_REMOTE"))
    # Host names (`name` or `name:port`, comma-separated) the dev server answers besides localhost,
    # 127.0.0.1 and [::1]; any other Host header is refused (DNS rebinding).
    allowed_hosts: str = Field("", validation_alias=_env("PA_ALLOWED_HOSTS"))

    # Model providers (platform keys; tenants may bring their own).
    openai_api_key: str | None = Field(None, validation_alias=_env("OPENAI_API_KEY"), repr=False)
    anthropic_api_key: str | None = Field(None, validation_alias=_env("ANTHROPIC_API_KEY"), repr=False)
    openai_compatible_base_url: str | None = Field(None, validation_alias=_env("PA_OPENAI_COMPATIBLE_BASE_URL"))
    openai_compatible_model: str = Field("llama3.2", validation_alias=_env("PA_OPENAI_COMPATIBLE_MODEL"))
    kms_key_id: str | None = Field(None, validation_alias=_env("PA_KMS_KEY_ID"))
    platform_monthly_budget_usd: float | None = Field(None, validation_alias=_env("PA_PLATFORM_MONTHLY_BUDGET_USD"))
    # Budgets count a response nobody can price at this rate (USD per million input or output tokens), and
    # reserve an unpriced request's cost with it; an admin price on the model replaces it.
    budget_unpriced_usd_per_mtok: float = Field(75.0, ge=0, validation_alias=_env("PA_BUDGET_UNPRICED_USD_PER_MTOK"))
    # A reservation a worker never settled (it died mid-request) stops counting after this long.
    budget_reservation_ttl_seconds: int = Field(
        900, ge=1, le=86_400, validation_alias=_env("PA_BUDGET_RESERVATION_TTL_SECONDS")
    )
    default_model: str = Field("auto", validation_alias=_env("PA_DEFAULT_MODEL"))

    # First-party web tools. `web_fetch` refuses loopback, private, link-local and cloud-metadata addresses; this
    # admin allow-list (`host` or `host:port`, comma-separated) lets it reach named internal hosts (never metadata).
    web_fetch_allow_hosts: str = Field("", validation_alias=_env("PA_WEB_FETCH_ALLOW_HOSTS"))
    # A SearXNG-compatible JSON search endpoint (e.g. `https://searx.example/search`); unset, `web_search` is not
    # offered at all.
    web_search_url: str | None = Field(None, validation_alias=_env("PA_WEB_SEARCH_URL"))

    # Knowledge (docs/knowledge.md): the documents bucket (presigned uploads under documents/), the ingest queue
    # (re-embed jobs go there too), the org default embedding model, and the function that embeds a search query
    # where the API cannot (on AWS the API layer has no embedder; unset: embedded in-process).
    documents_bucket: str | None = Field(None, validation_alias=_env("PA_DOCUMENTS_BUCKET"))
    ingest_queue_url: str | None = Field(None, validation_alias=_env("PA_INGEST_QUEUE_URL"))
    embedding_model: str = Field("wordllama:l2_supercat_256", validation_alias=_env("PA_EMBEDDING_MODEL"))
    knowledge_function: str | None = Field(None, validation_alias=_env("PA_KNOWLEDGE_FUNCTION"))
    # Buckets a knowledge source may sync an S3 prefix from (comma-separated); empty: any locally, none on AWS.
    knowledge_source_buckets: str = Field("", validation_alias=_env("PA_KNOWLEDGE_SOURCE_BUCKETS"))
    # Search's reranking stage (`knowledge/rerank.py`: auto = tokens where WordLlama is installed, none, tokens, or a
    # Bedrock rerank model id) and whether the router model rewrites a conversational follow-up into a standalone
    # query (`knowledge/query_rewrite.py`).
    knowledge_reranker: str = Field("auto", validation_alias=_env("PA_KNOWLEDGE_RERANKER"))
    knowledge_query_rewrite: bool = Field(False, validation_alias=_env("PA_KNOWLEDGE_QUERY_REWRITE"))
    # A source's sync brings this many items in step per ingest invocation, then queues the next chunk
    # (`knowledge/source_chunks.py`): a 10k-page sitemap is many short invocations, never one long one.
    knowledge_sync_chunk: int = Field(100, ge=1, le=5000, validation_alias=_env("PA_KNOWLEDGE_SYNC_CHUNK"))
    # Text recognition of scans and photos (`knowledge/parsing/ocr.py`): RapidOCR in the process, or Amazon Textract
    # (on AWS, where the ingest layer cannot hold RapidOCR's opencv and onnxruntime; the template sets it).
    ocr_backend: Literal["rapidocr", "textract"] = Field("rapidocr", validation_alias=_env("PA_OCR_BACKEND"))
    # The most one page (or image) may take to recognise; a page past it is left out (`knowledge/parsing/ocr.py`).
    ocr_page_seconds: float = Field(20.0, gt=0, le=300, validation_alias=_env("PA_OCR_PAGE_SECONDS"))
    # Ingest limits (docs/knowledge.md): a document past them ends `failed: too_large` with no chunks. Parsing runs
    # in a child process with this much address space and time (the ingest function's MemorySize is 2048).
    ingest_max_chars: int = Field(4_000_000, ge=1, validation_alias=_env("PA_INGEST_MAX_CHARS"))
    ingest_max_chunks: int = Field(8000, ge=1, validation_alias=_env("PA_INGEST_MAX_CHUNKS"))
    ingest_parse_memory_mb: int = Field(1024, ge=256, validation_alias=_env("PA_INGEST_PARSE_MEMORY_MB"))
    ingest_parse_seconds: float = Field(90, gt=0, le=600, validation_alias=_env("PA_INGEST_PARSE_SECONDS"))

    # Workflow outputs (docs/workflows.md): the queue their deliveries go through, retries (delay doubling from the
    # base, at most 900 s, SQS's limit), the SES sender, and an admin allow-list (`host` / `host:port`) of internal
    # hosts a callback may reach (the same address checks as `web_fetch` refuse them otherwise; metadata never).
    output_queue_url: str | None = Field(None, validation_alias=_env("PA_OUTPUT_QUEUE_URL"))
    output_max_attempts: int = Field(6, ge=1, le=20, validation_alias=_env("PA_OUTPUT_MAX_ATTEMPTS"))
    # Traces (docs/evals.md): OTLP over HTTP to this collector (e.g. `http://127.0.0.1:4318`, or the ADOT collector on
    # AWS); empty: no spans and no OpenTelemetry SDK imported. Message content goes into spans only where
    # `otel_content` allows it (the ceiling) and the org turned it on (`trace_content`), and never for a restricted run.
    otel_endpoint: str = Field("", validation_alias=_env("PA_OTEL_ENDPOINT"))
    otel_content: bool = Field(False, validation_alias=_env("PA_OTEL_CONTENT"))
    output_retry_base_seconds: int = Field(30, ge=0, le=900, validation_alias=_env("PA_OUTPUT_RETRY_BASE_SECONDS"))
    output_email_from: str = Field("agent@personal-agent.local", validation_alias=_env("PA_OUTPUT_EMAIL_FROM"))
    output_allow_hosts: str = Field("", validation_alias=_env("PA_OUTPUT_ALLOW_HOSTS"))
    # Channels in (docs/channels.md): the Slack Web API and Telegram Bot API bases (tests point them at fakes), the
    # local inbound SMTP port `pa dev` listens on (0: none), and on AWS the function a channel's run is handed to
    # after the ack (an async invoke of the channels function itself; empty: in the same process).
    slack_api_url: str = Field("https://slack.com/api/", validation_alias=_env("PA_SLACK_API_URL"))
    telegram_api_url: str = Field("https://api.telegram.org", validation_alias=_env("PA_TELEGRAM_API_URL"))
    # Slack's OAuth v2 install (docs/channels.md): the app's credentials, its signing secret (one per app) and where
    # Slack's authorize page is (tests point it at a fake). Unset client id: the install link is 409, set by hand.
    slack_client_id: str = Field("", validation_alias=_env("PA_SLACK_CLIENT_ID"))
    slack_client_secret: str = Field("", validation_alias=_env("PA_SLACK_CLIENT_SECRET"))
    slack_signing_secret: str = Field("", validation_alias=_env("PA_SLACK_SIGNING_SECRET"))
    slack_authorize_url: str = Field(
        "https://slack.com/oauth/v2/authorize", validation_alias=_env("PA_SLACK_AUTHORIZE_URL")
    )
    smtp_port: int = Field(0, ge=0, le=65535, validation_alias=_env("PA_SMTP_PORT"))
    channels_worker_function: str = Field("", validation_alias=_env("PA_CHANNELS_WORKER_FUNCTION"))
    channel_email_bucket: str = Field("", validation_alias=_env("PA_CHANNEL_EMAIL_BUCKET"))  # SES stores mail here
    # Web Push for approvals (docs/push.md): the VAPID key pair (`pa push-keys` makes one; base64url) and the
    # contact the push services see. No public key: push is off (`GET /api/v1/push/config` says so). The private
    # key is read by the deliver function only.
    vapid_public_key: str = Field("", validation_alias=_env("PA_VAPID_PUBLIC_KEY"))
    vapid_private_key: str = Field("", validation_alias=_env("PA_VAPID_PRIVATE_KEY"))
    vapid_subject: str = Field("mailto:admin@personal-agent.local", validation_alias=_env("PA_VAPID_SUBJECT"))
    # The web chat's address, for links in notifications (unset: links are relative paths).
    public_url: str = Field("", validation_alias=_env("PA_PUBLIC_URL"))
    # Org providers' `base_url` (README, Keys and budgets): the same address checks as outputs (public internet only,
    # cloud metadata never); this operator allow-list (`host` / `host:port`, comma-separated) lets an org register
    # a server on loopback or the VPC (a local Ollama/vLLM: `localhost:11434`). PA_OPENAI_COMPATIBLE_BASE_URL's host
    # is the operator's own and always allowed.
    provider_allow_hosts: str = Field("", validation_alias=_env("PA_PROVIDER_ALLOW_HOSTS"))
    # Web Push endpoints must be on a push service: FCM, Mozilla autopush, Apple and Windows push by default; this
    # operator list (`host`, `host:port`, or `.domain` for its subdomains) adds more, e.g. a test's push service.
    push_allow_hosts: str = Field("", validation_alias=_env("PA_PUSH_ALLOW_HOSTS"))

    # MCP servers (docs/mcp.md): their URLs pass the same address checks as outputs at save and before every
    # connection (public internet only, cloud metadata never); this operator allow-list (`host` / `host:port`,
    # comma-separated) lets an org register a server on loopback or the VPC. `pa dev` adds its own demo server.
    mcp_allow_hosts: str = Field("", validation_alias=_env("PA_MCP_ALLOW_HOSTS"))
    # The exact command lines a `stdio` MCP server may be (local mode only), one per line; an admin picks one of
    # them as the server's `url`, never sends a command of their own. Empty: no stdio servers.
    mcp_stdio_commands: str = Field("", validation_alias=_env("PA_MCP_STDIO_COMMANDS"))

    @property
    def is_local(self) -> bool:
        return self.environment in ("local", "test")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
