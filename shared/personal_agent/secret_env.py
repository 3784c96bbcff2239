"""Secrets into the environment. On AWS the functions get Secrets Manager ARNs, never secret values.

template.yaml passes `PA_DATABASE_SECRET_ARN`, `PA_UPSTASH_TOKEN_SECRET_ARN`, `PA_PROVIDER_KEYS_SECRET_ARN`,
(deliver only) `PA_VAPID_SECRET_ARN` and (API and channels only) `PA_SLACK_APP_SECRET_ARN`.
The code that needs a secret-derived setting calls `ensure_secrets_loaded()` first (the DB pool, the bus,
the model catalog and builder): each named secret is fetched once per container and becomes the plain
variable the settings read (`DATABASE_URL`, `UPSTASH_REDIS_REST_TOKEN`, `OPENAI_API_KEY`, ...), and the
settings are read again. Loading at first use, not at import, keeps boto3 and Secrets Manager out of the
API's cold start and lets /healthz answer while a secret is still empty. A plain variable that is already
set wins, so local runs and tests never reach Secrets Manager.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, MutableMapping
from urllib.parse import quote

from personal_agent.aws_clients import aws_client_at
from personal_agent.errors import ConfigurationError

DATABASE_SECRET = "PA_DATABASE_SECRET_ARN"
UPSTASH_TOKEN_SECRET = "PA_UPSTASH_TOKEN_SECRET_ARN"
PROVIDER_KEYS_SECRET = "PA_PROVIDER_KEYS_SECRET_ARN"
VAPID_SECRET = "PA_VAPID_SECRET_ARN"  # the deliver function's web push signing key (`pa push-keys`)
SLACK_APP_SECRET = "PA_SLACK_APP_SECRET_ARN"  # the deployment's Slack app (OAuth install): client and signing secrets

# Secrets that hold one value as is: (the variable naming the secret, the variable it sets, what it is).
_PLAIN_SECRETS = (
    (UPSTASH_TOKEN_SECRET, "UPSTASH_REDIS_REST_TOKEN", "Upstash token"),
    (VAPID_SECRET, "PA_VAPID_PRIVATE_KEY", "VAPID key"),
)

# The Slack app secret's JSON fields and the variables they set.
_SLACK_APP_FIELDS = (("client_secret", "PA_SLACK_CLIENT_SECRET"), ("signing_secret", "PA_SLACK_SIGNING_SECRET"))

# Only provider credentials may come from the provider-keys secret: it must not be a way to set PYTHONPATH.
_PROVIDER_KEY_NAME = re.compile(r"^[A-Z][A-Z0-9_]*_API_KEY$")

Fetch = Callable[[str], str]

# Provider-key secrets already applied to this process (their names are unknown until fetched).
_applied_to_process: set[str] = set()
_loaded = False
_lock = threading.Lock()


def database_url_from_secret(secret: str, host: str | None, port: str | None, dbname: str | None) -> str:
    """A postgresql:// URL from a secret holding a URL, or RDS-style JSON (`username`, `password`, ...).

    `host` (an RDS Proxy endpoint) overrides the secret's host; `port` and `dbname` fill what it lacks.
    """
    text = secret.strip()
    if text.startswith(("postgresql://", "postgres://")):
        return text
    try:
        data = json.loads(text) if text else {}
    except json.JSONDecodeError:
        raise ConfigurationError("the database secret is neither a postgresql:// URL nor JSON") from None
    if not isinstance(data, dict):
        raise ConfigurationError("the database secret's JSON is not an object")
    url = data.get("url") or data.get("DATABASE_URL")
    if isinstance(url, str) and url:
        return url
    missing = [k for k in ("username", "password") if not data.get(k)]
    host = host or data.get("host")
    if not host:
        missing.append("host (or the DatabaseHost parameter)")
    if missing:
        raise ConfigurationError(f"the database secret lacks {', '.join(missing)}; see docs/deploy.md")
    port = str(data.get("port") or port or "5432")
    dbname = data.get("dbname") or dbname or "postgres"
    user, password = quote(str(data["username"]), safe=""), quote(str(data["password"]), safe="")
    return f"postgresql://{user}:{password}@{host}:{port}/{quote(str(dbname), safe='')}?sslmode=require"


def provider_keys_from_secret(secret: str) -> dict[str, str]:
    """`{"OPENAI_API_KEY": "...", ...}` from the provider-keys secret; empty strings are skipped."""
    try:
        data = json.loads(secret or "{}")
    except json.JSONDecodeError:
        raise ConfigurationError("the provider-keys secret is not JSON") from None
    if not isinstance(data, dict):
        raise ConfigurationError("the provider-keys secret's JSON is not an object")
    bad = sorted(k for k in data if not _PROVIDER_KEY_NAME.match(str(k)))
    if bad:
        raise ConfigurationError(f"the provider-keys secret may only hold *_API_KEY names, not {', '.join(bad)}")
    return {str(k): str(v) for k, v in data.items() if v}


def slack_app_from_secret(secret: str) -> dict[str, str]:
    """`{"client_secret": ..., "signing_secret": ...}` as the variables they set; empty fields are skipped."""
    try:
        data = json.loads(secret or "{}")
    except json.JSONDecodeError:
        raise ConfigurationError("the Slack app secret is not JSON") from None
    if not isinstance(data, dict):
        raise ConfigurationError("the Slack app secret's JSON is not an object")
    return {target: str(data[field]) for field, target in _SLACK_APP_FIELDS if data.get(field)}


def _fetch_with_boto3(arn: str) -> str:
    # Short timeouts: a function in a VPC without a route to Secrets Manager should fail fast and say so.
    retries = {"max_attempts": 2, "mode": "standard"}
    client = aws_client_at("secretsmanager", None, None, connect_timeout=3, read_timeout=5, retries=retries)
    try:
        return str(client.get_secret_value(SecretId=arn)["SecretString"])
    except Exception as exc:
        raise ConfigurationError(f"cannot read secret {arn}: {type(exc).__name__}: {exc}") from None


def load_secrets_into_environ(environ: MutableMapping[str, str] | None = None, fetch: Fetch | None = None) -> list[str]:
    """Fetch the secrets the environment names and set the variables they stand for; return what was set."""
    env = os.environ if environ is None else environ
    get = fetch or _fetch_with_boto3
    updates: dict[str, str] = {}
    arn = env.get(DATABASE_SECRET)
    if arn and not env.get("DATABASE_URL"):
        secret = get(arn)
        updates["DATABASE_URL"] = database_url_from_secret(
            secret, env.get("PA_DATABASE_HOST"), env.get("PA_DATABASE_PORT"), env.get("PA_DATABASE_NAME")
        )
    for secret_var, target, what in _PLAIN_SECRETS:
        arn = env.get(secret_var)
        if arn and not env.get(target):
            value = get(arn).strip()
            if not value:
                raise ConfigurationError(f"the {what} secret {arn} is empty")
            updates[target] = value
    arn = env.get(SLACK_APP_SECRET)
    if arn and not all(env.get(target) for _, target in _SLACK_APP_FIELDS):
        for name, value in slack_app_from_secret(get(arn)).items():
            if not env.get(name):
                updates[name] = value
    arn = env.get(PROVIDER_KEYS_SECRET)
    if arn and (env is not os.environ or arn not in _applied_to_process):
        for name, value in provider_keys_from_secret(get(arn)).items():
            if not env.get(name):
                updates[name] = value
        if env is os.environ:
            _applied_to_process.add(arn)
    env.update(updates)
    return sorted(updates)


def ensure_secrets_loaded() -> None:
    """Load the secrets this process's environment names, once; a failure is raised and retried next call."""
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        if load_secrets_into_environ():
            from personal_agent.settings import get_settings

            get_settings.cache_clear()
        _loaded = True
