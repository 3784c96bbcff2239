"""Slack's OAuth install on AWS (issue 34): the stack passes the app's client id as a plain variable and its client and
signing secrets only as a Secrets Manager ARN (`PA_SLACK_APP_SECRET_ARN`, template.yaml's SlackAppSecret). Against
moto's Secrets Manager and a fake Slack on loopback: with nothing but the ARN in the environment, the install link is
offered, its state is signed under the secret's client secret, the code exchange authenticates with it, and the org's
Slack channel stores the secret's signing secret."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import httpx
import pytest

from personal_agent import secret_env
from personal_agent.channels import configs, slack_install
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings
from tests.channel_fakes import FakeSlack, running_fake_slack

SIGNING = "f0e1d2c3b4a5968778695a4b3c2d1e0f"


@pytest.fixture
def slack_from_secrets_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSlack]:
    """The environment template.yaml gives the API and channels functions, the secret in moto, a fake Slack."""
    value = json.dumps({"client_secret": FakeSlack.CLIENT_SECRET, "signing_secret": SIGNING})
    name = f"personal-agent/test-{uuid.uuid4().hex[:8]}/slack-app"
    arn = boto3.client("secretsmanager").create_secret(Name=name, SecretString=value)["ARN"]
    with running_fake_slack() as slack:
        monkeypatch.setenv("PA_SLACK_APP_SECRET_ARN", arn)
        monkeypatch.setenv("PA_SLACK_CLIENT_ID", FakeSlack.CLIENT_ID)
        # Empty, as on AWS; whatever the loader sets is restored after the test.
        monkeypatch.setenv("PA_SLACK_CLIENT_SECRET", "")
        monkeypatch.setenv("PA_SLACK_SIGNING_SECRET", "")
        monkeypatch.setenv("PA_PUBLIC_URL", "https://chat.example.com")
        monkeypatch.setenv("PA_SLACK_API_URL", slack.base_url)
        monkeypatch.setenv("PA_SLACK_AUTHORIZE_URL", slack.authorize_url)
        monkeypatch.setattr(secret_env, "_loaded", False)  # a cold start
        get_settings.cache_clear()
        try:
            yield slack
        finally:
            get_settings.cache_clear()


def test_the_slack_app_secret_sets_both_secrets_and_a_plain_variable_wins() -> None:
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:slack"
    secret = json.dumps({"client_secret": "c1", "signing_secret": "s1"})
    env = {"PA_SLACK_APP_SECRET_ARN": arn}
    assert secret_env.load_secrets_into_environ(env, {arn: secret}.__getitem__) == [
        "PA_SLACK_CLIENT_SECRET",
        "PA_SLACK_SIGNING_SECRET",
    ]
    assert env["PA_SLACK_CLIENT_SECRET"] == "c1" and env["PA_SLACK_SIGNING_SECRET"] == "s1"
    mine = {"PA_SLACK_APP_SECRET_ARN": arn, "PA_SLACK_CLIENT_SECRET": "mine", "PA_SLACK_SIGNING_SECRET": "mine"}
    nothing: dict[str, str] = {}
    assert secret_env.load_secrets_into_environ(mine, nothing.__getitem__) == []  # nothing fetched


async def test_the_install_runs_on_the_secrets_managers_values(
    make_tenant: Any, slack_from_secrets_manager: FakeSlack
) -> None:
    slack = slack_from_secrets_manager
    tenant = make_tenant(("org-admin",))
    admin = Principal(tenant.user_id, tenant.org_id, tenant.slug, frozenset({"org-admin"}), tenant.subject)

    location = slack_install.install_url(admin)  # not 409: the secrets came from Secrets Manager
    query = parse_qs(urlsplit(location).query)
    assert location.startswith(slack.authorize_url) and query["client_id"] == [FakeSlack.CLIENT_ID]
    assert query["redirect_uri"] == ["https://chat.example.com/api/v1/channels/slack/oauth"]
    assert get_settings().slack_client_secret == FakeSlack.CLIENT_SECRET

    # Slack's authorize page sends the person back with a code; its redirect is not followed (no such host).
    back = httpx.get(location, timeout=30, follow_redirects=False)
    callback = parse_qs(urlsplit(back.headers["location"]).query)
    config = await slack_install.complete(callback["code"][0], callback["state"][0])

    # The fake Slack accepts only the real client secret by HTTP Basic: the exchange used the secret's.
    assert config.external_key == FakeSlack.TEAM_ID
    opened = await configs.of_org(tenant.org_id, "slack")
    assert opened is not None
    assert opened.secrets == {"bot_token": FakeSlack.BOT_TOKEN, "signing_secret": SIGNING}
