"""Secrets named by ARN in the environment become the plain variables settings read, once, and only on AWS."""

from __future__ import annotations

import json

import pytest

from personal_agent.errors import ConfigurationError
from personal_agent.secret_env import database_url_from_secret, load_secrets_into_environ, provider_keys_from_secret

DB_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:db"
TOKEN_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:upstash"
KEYS_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:keys"


class FakeSecrets:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.reads: list[str] = []

    def __call__(self, arn: str) -> str:
        self.reads.append(arn)
        return self.values[arn]


def test_a_url_secret_is_used_as_it_is() -> None:
    assert database_url_from_secret(" postgresql://pa_app:pw@db:5432/pa \n", None, None, None) == (
        "postgresql://pa_app:pw@db:5432/pa"
    )


def test_rds_json_secret_goes_through_the_proxy_host_and_escapes_the_password() -> None:
    secret = json.dumps({"username": "pa_app", "password": "p@ss/w:rd", "host": "cluster.internal", "port": 5432})
    url = database_url_from_secret(secret, "proxy.example", "6432", "personal_agent")
    assert url == "postgresql://pa_app:p%40ss%2Fw%3Ard@proxy.example:5432/personal_agent?sslmode=require"


def test_a_managed_master_secret_takes_host_port_and_name_from_parameters() -> None:
    secret = json.dumps({"username": "pa_app", "password": "pw"})
    assert database_url_from_secret(secret, "proxy.example", "5432", "pa") == (
        "postgresql://pa_app:pw@proxy.example:5432/pa?sslmode=require"
    )


@pytest.mark.parametrize(
    ("secret", "says"),
    [("{}", "lacks username, password, host"), ("not json", "neither"), ("[1]", "not an object")],
)
def test_an_unusable_database_secret_says_what_is_wrong(secret: str, says: str) -> None:
    with pytest.raises(ConfigurationError, match=says):
        database_url_from_secret(secret, None, None, None)


def test_the_provider_keys_secret_may_only_set_api_keys() -> None:
    assert provider_keys_from_secret('{"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": ""}') == {
        "OPENAI_API_KEY": "sk-1"
    }
    with pytest.raises(ConfigurationError, match="PYTHONPATH"):
        provider_keys_from_secret('{"PYTHONPATH": "/tmp/evil"}')


def test_loading_sets_the_variables_the_arns_stand_for() -> None:
    env = {
        "PA_DATABASE_SECRET_ARN": DB_ARN,
        "PA_UPSTASH_TOKEN_SECRET_ARN": TOKEN_ARN,
        "PA_PROVIDER_KEYS_SECRET_ARN": KEYS_ARN,
    }
    secrets = FakeSecrets(
        {
            DB_ARN: "postgresql://pa_app:pw@db/pa",
            TOKEN_ARN: "upstash-token\n",
            KEYS_ARN: '{"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "sk-ant-2"}',
        }
    )
    assert load_secrets_into_environ(env, secrets) == [
        "ANTHROPIC_API_KEY",
        "DATABASE_URL",
        "OPENAI_API_KEY",
        "UPSTASH_REDIS_REST_TOKEN",
    ]
    assert env["DATABASE_URL"] == "postgresql://pa_app:pw@db/pa"
    assert env["UPSTASH_REDIS_REST_TOKEN"] == "upstash-token"
    assert env["OPENAI_API_KEY"] == "sk-1"


def test_plain_variables_win_and_nothing_is_fetched_without_arns() -> None:
    secrets = FakeSecrets({})
    env = {"PA_DATABASE_SECRET_ARN": DB_ARN, "DATABASE_URL": "postgresql://local/pa"}
    assert load_secrets_into_environ(env, secrets) == []
    assert load_secrets_into_environ({"PA_ENV": "local"}, secrets) == []
    assert secrets.reads == []


def test_an_explicit_key_is_not_overwritten_by_the_platform_secret() -> None:
    env = {"PA_PROVIDER_KEYS_SECRET_ARN": KEYS_ARN, "OPENAI_API_KEY": "sk-mine"}
    load_secrets_into_environ(env, FakeSecrets({KEYS_ARN: '{"OPENAI_API_KEY": "sk-platform"}'}))
    assert env["OPENAI_API_KEY"] == "sk-mine"


def test_first_use_fetches_once_and_refreshes_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from personal_agent import secret_env
    from personal_agent.settings import get_settings

    fetched: list[str] = []

    def fetch(arn: str) -> str:
        fetched.append(arn)
        return "postgresql://pa_app:pw@proxy.example/pa"

    monkeypatch.setattr(secret_env, "_loaded", False)
    monkeypatch.setattr(secret_env, "_fetch_with_boto3", fetch)
    monkeypatch.setenv("PA_DATABASE_SECRET_ARN", DB_ARN)
    monkeypatch.setenv("DATABASE_URL", "")  # restored after the test, whatever the loader sets
    get_settings.cache_clear()
    try:
        assert not get_settings().database_url
        secret_env.ensure_secrets_loaded()
        secret_env.ensure_secrets_loaded()
        assert fetched == [DB_ARN]
        assert get_settings().database_url == "postgresql://pa_app:pw@proxy.example/pa"
    finally:
        get_settings.cache_clear()


@pytest.mark.parametrize("function", ["api", "stream", "run_worker", "steps", "triggers"])
def test_importing_a_handler_fetches_no_secret(function: str) -> None:
    """Secrets load on first use: a cold start imports no boto3 for them, and /healthz works while one is empty."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = f"import sys, os, functions.{function}.app; print('boto3' in sys.modules, 'DATABASE_URL' in os.environ)"
    env = {"PATH": "/usr/bin:/bin", "PA_ENV": "aws", "PYTHONPATH": str(root), "PA_DATABASE_SECRET_ARN": DB_ARN}
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["False", "False"]
