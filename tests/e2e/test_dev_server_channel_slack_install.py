"""Slack's OAuth v2 install (issue 34) on `pa dev`, against a fake Slack on loopback: its authorize page and
`oauth.v2.access` as Slack serves them (client credentials by HTTP Basic, one-time codes). An org admin's install link
goes to the authorize page with a signed state; Slack's redirect back to the callback stores the workspace's bot
token and the app's signing secret as the org's Slack channel, and a mention signed with that secret is then answered
with that token. A tampered state, a used code or a member who is no admin installs nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from personal_agent.local.ports import free_port
from tests.channel_fakes import FakeSlack, running_fake_slack, slack_headers
from tests.e2e.pa_dev import DevServer, running_pa_dev

SIGNING = "app-signing-secret-for-install-tests"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeSlack]]:
    port = free_port()
    with running_fake_slack() as slack:
        env = {
            "PA_PORT": str(port),
            "PA_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "PA_SLACK_API_URL": slack.base_url,
            "PA_SLACK_AUTHORIZE_URL": slack.authorize_url,
            "PA_SLACK_CLIENT_ID": FakeSlack.CLIENT_ID,
            "PA_SLACK_CLIENT_SECRET": FakeSlack.CLIENT_SECRET,
            "PA_SLACK_SIGNING_SECRET": SIGNING,
        }
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-slack-install"), env_extra=env) as server:
            yield server, slack


def _authorize(server: DevServer) -> httpx.Response:
    """The admin's install link, then Slack's authorize page (the person allows the app): Slack's redirect back."""
    admin = server.auth_for("boss", "org-admin")
    install = httpx.get(f"{server.url}/api/v1/admin/channels/slack/install", headers=admin, timeout=30)
    assert install.status_code == 302, install.text
    return httpx.get(install.headers["location"], timeout=30)


@pytest.mark.timeout(300)
def test_an_admin_installs_slack_and_its_token_answers(world: tuple[DevServer, FakeSlack]) -> None:
    server, slack = world
    admin = server.auth_for("boss", "org-admin")
    assert httpx.get(f"{server.url}/api/v1/admin/channels/slack/install", headers=server.auth).status_code == 403

    back = _authorize(server)
    (asked,) = slack.of("oauth/v2/authorize")
    assert asked["client_id"] == FakeSlack.CLIENT_ID and "app_mentions:read" in asked["scope"].split(",")
    assert asked["redirect_uri"] == f"{server.url.rstrip('/')}/api/v1/channels/slack/oauth"
    callback = back.headers["location"]
    state = parse_qs(urlsplit(callback).query)["state"][0]

    # A tampered state is refused before Slack is asked, and nothing is stored.
    forged = callback.replace(state, state[:-1] + ("0" if state[-1] != "0" else "1"))
    refused = httpx.get(forged, timeout=30)
    assert refused.status_code == 401 and refused.json()["code"] == "oauth_state_invalid", refused.text
    assert slack.of("oauth.v2.access") == []
    assert httpx.get(f"{server.url}/api/v1/admin/channels/slack", headers=admin).status_code == 404

    done = httpx.get(callback, timeout=30)
    assert done.status_code == 303 and done.headers["location"].endswith("/settings?slack_installed=TFAKE0001")
    (exchanged,) = slack.of("oauth.v2.access")
    assert exchanged["code"] == parse_qs(urlsplit(callback).query)["code"][0]
    stored = httpx.get(f"{server.url}/api/v1/admin/channels/slack", headers=admin).json()
    assert stored["key"] == FakeSlack.TEAM_ID and stored["secrets_set"] == ["bot_token", "signing_secret"]
    assert FakeSlack.BOT_TOKEN not in json.dumps(stored)

    # The same code again: Slack refuses it, a clear 502.
    again = httpx.get(callback, timeout=30)
    assert again.status_code == 502 and again.json()["code"] == "slack_oauth_failed", again.text

    # A mention signed with the app's signing secret is answered with the installed workspace's bot token.
    event = {"type": "app_mention", "user": "U0NEW", "text": "<@UBOT0001> hi", "ts": "1.000001", "channel": "C1"}
    body = json.dumps(
        {"team_id": FakeSlack.TEAM_ID, "type": "event_callback", "event_id": "EvInstall1", "event": event}
    ).encode()
    headers = {**slack_headers(SIGNING, body), "Content-Type": "application/json"}
    ack = httpx.post(f"{server.url}/api/v1/channels/slack/events", content=body, headers=headers, timeout=30)
    assert ack.status_code == 200, ack.text
    slack.wait_for(lambda calls: any(m == "chat.postMessage" for m, _ in calls))
    (posted,) = slack.of("chat.postMessage")
    assert posted["_token"] == FakeSlack.BOT_TOKEN and "Connect your account" in posted["text"]
