"""One way to run the local stack apart from the machine it runs on, for the tests and the benchmarks: nothing
reaches a developer's database, Redis, AWS account or model provider, whatever their shell or `.env` sets."""

from __future__ import annotations

import os
from pathlib import Path

from personal_agent.local.ports import free_port
from personal_agent.settings import get_settings

# What would point the stack at a real service or provider. Blanked rather than removed: "" reads as unset
# and, unlike a removed variable, wins over the same name in a `.env` file.
EXTERNAL_SERVICES = (
    "DATABASE_URL",
    "DATABASE_ADMIN_URL",
    "REDIS_URL",
    "AWS_ENDPOINT_URL",
    "UPSTASH_REDIS_REST_URL",
    "UPSTASH_REDIS_REST_TOKEN",
    "PA_STATE_MACHINE_ARN",
    "PA_DOCUMENTS_BUCKET",
    "PA_INGEST_QUEUE_URL",
    "PA_KNOWLEDGE_FUNCTION",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "PA_OPENAI_COMPATIBLE_BASE_URL",
)


def isolated_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The variables for a stack of its own: external services blanked, data under `data_dir`, free ports for
    Valkey and moto, and credentials only moto accepts; `extra` adds or overrides (`PA_ENV`, ...)."""
    return {
        **dict.fromkeys(EXTERNAL_SERVICES, ""),
        "PA_DATA_DIR": str(data_dir),
        "PA_VALKEY_PORT": str(free_port()),
        "PA_MOTO_PORT": str(free_port()),
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        **extra,
    }


def isolate_process(data_dir: Path, **extra: str) -> None:
    """Apply `isolated_env` to this process and drop the cached settings, before starting a `LocalStack`."""
    os.environ.update(isolated_env(data_dir, **extra))
    get_settings.cache_clear()
