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
    moto_port: int = Field(5055, validation_alias=_env("PA_MOTO_PORT"))
    valkey_port: int = Field(6390, validation_alias=_env("PA_VALKEY_PORT"))
    log_level: str = Field("INFO", validation_alias=_env("PA_LOG_LEVEL", "POWERTOOLS_LOG_LEVEL"))

    # Postgres: the app connects as a role without BYPASSRLS; migrations run as the owner.
    database_url: str | None = Field(None, validation_alias=_env("DATABASE_URL"))
    database_admin_url: str | None = Field(None, validation_alias=_env("DATABASE_ADMIN_URL"))
    database_app_role: str = Field("pa_app", validation_alias=_env("PA_DATABASE_APP_ROLE"))
    database_app_password: str | None = Field(None, validation_alias=_env("PA_DATABASE_APP_PASSWORD"))
    database_pool_max: int = Field(10, validation_alias=_env("PA_DATABASE_POOL_MAX"))

    # Event bus: Redis/Valkey over TCP, or Upstash REST.
    redis_url: str | None = Field(None, validation_alias=_env("REDIS_URL"))
    upstash_url: str | None = Field(None, validation_alias=_env("UPSTASH_REDIS_REST_URL"))
    upstash_token: str | None = Field(None, validation_alias=_env("UPSTASH_REDIS_REST_TOKEN"))
    event_retention_seconds: int = Field(86_400, validation_alias=_env("PA_EVENT_RETENTION_SECONDS"))
    event_stream_maxlen: int = Field(10_000, validation_alias=_env("PA_EVENT_STREAM_MAXLEN"))

    # AWS (moto in local mode unless AWS_ENDPOINT_URL points elsewhere).
    aws_endpoint_url: str | None = Field(None, validation_alias=_env("AWS_ENDPOINT_URL"))
    aws_region: str = Field("us-east-1", validation_alias=_env("AWS_REGION", "AWS_DEFAULT_REGION"))
    state_machine_arn: str | None = Field(None, validation_alias=_env("PA_STATE_MACHINE_ARN"))
    run_worker_function: str = Field("pa-run-worker", validation_alias=_env("PA_RUN_WORKER_FUNCTION"))

    # Identity.
    oidc_issuer: str | None = Field(None, validation_alias=_env("PA_OIDC_ISSUER"))
    oidc_audience: str = Field("personal-agent", validation_alias=_env("PA_OIDC_AUDIENCE"))
    oidc_jwks_url: str | None = Field(None, validation_alias=_env("PA_OIDC_JWKS_URL"))

    # Model providers (platform keys; tenants may bring their own).
    openai_api_key: str | None = Field(None, validation_alias=_env("OPENAI_API_KEY"), repr=False)
    anthropic_api_key: str | None = Field(None, validation_alias=_env("ANTHROPIC_API_KEY"), repr=False)
    openai_compatible_base_url: str | None = Field(None, validation_alias=_env("PA_OPENAI_COMPATIBLE_BASE_URL"))
    default_model: str = Field("auto", validation_alias=_env("PA_DEFAULT_MODEL"))

    @property
    def is_local(self) -> bool:
        return self.environment in ("local", "test")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
