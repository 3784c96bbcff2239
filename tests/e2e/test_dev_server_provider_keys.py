"""Write-only secrets stay where they were entered (issue 28, item 5), on `pa dev` as a user runs it, over HTTP: an
org admin stores a BYOK key for a provider on one loopback model server; the key cannot follow the provider to
another server chosen afterwards (the same name re-created at a new base_url, or a second provider), so the second
server never receives it. Provider base_urls pass the outbound address checks (metadata and VPC addresses are
refused; the operator allow-lists loopback for these fake servers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, running_fake_provider

BYOK_KEY = "sk-acme-org-key-4f8b2c9d1e"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeProvider, FakeProvider]]:
    with (
        running_fake_provider() as entered,
        running_fake_provider() as chosen_later,
        running_pa_dev(tmp_path_factory.mktemp("pa-dev-provider-keys")) as server,
    ):
        yield server, entered, chosen_later


def _provider(http: httpx.Client, headers: dict[str, str], **body: Any) -> httpx.Response:
    return http.post("/api/v1/admin/providers", headers=headers, json={"kind": "openai-compatible", **body})


def _model(http: httpx.Client, headers: dict[str, str], provider: httpx.Response) -> None:
    assert provider.status_code == 201, provider.text
    added = http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=headers, json={"name": "m"})
    assert added.status_code == 201, added.text


def _run(http: httpx.Client, headers: dict[str, str], model: str) -> list[dict[str, Any]]:
    chat = http.post("/api/v1/chats", headers=headers, json={}).json()
    started = http.post(f"/api/v1/chats/{chat['id']}/runs", headers=headers, json={"message": "hi", "model": model})
    assert started.status_code == 202, started.text
    with http.stream("GET", started.json()["events_url"], headers=headers) as stream:
        assert stream.status_code == 200
        return [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]


@pytest.mark.timeout(300)
def test_a_byok_key_never_reaches_a_server_chosen_after_it_was_entered(
    world: tuple[DevServer, FakeProvider, FakeProvider],
) -> None:
    server, entered, chosen_later = world
    admin = server.auth_for("boss", "org-admin")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        key = http.post("/api/v1/keys", headers=admin, json={"provider": "acme", "key": BYOK_KEY})
        assert key.status_code == 201, key.text
        key_id = key.json()["id"]
        first = _provider(http, admin, name="acme", base_url=entered.base_url, trust_tier=2, key_id=key_id)
        _model(http, admin, first)
        assert _run(http, admin, "acme:m")[-1]["type"] == "RUN_FINISHED"
        assert entered.keys == [BYOK_KEY]  # the server it was entered for gets it

        # The same provider re-created at another server, or a second provider there: the key stays behind.
        second = _provider(http, admin, name="rogue", base_url=chosen_later.base_url, trust_tier=2, key_id=key_id)
        assert (second.status_code, second.json()["code"]) == (409, "key_endpoint_mismatch")
        assert http.delete(f"/api/v1/admin/providers/{first.json()['id']}", headers=admin).status_code == 204
        moved = _provider(http, admin, name="acme", base_url=chosen_later.base_url, trust_tier=2, key_id=key_id)
        assert (moved.status_code, moved.json()["code"]) == (409, "key_endpoint_mismatch")
        assert BYOK_KEY not in moved.text

        # Without the key it may go there, and it calls the server with no key at all.
        _model(http, admin, _provider(http, admin, name="acme", base_url=chosen_later.base_url, trust_tier=2))
        assert _run(http, admin, "acme:m")[-1]["type"] == "RUN_FINISHED"
        assert chosen_later.keys == ["none"]
        assert entered.keys == [BYOK_KEY]

        # The key still opens for the server it was entered for.
        _model(http, admin, _provider(http, admin, name="home", base_url=entered.base_url, trust_tier=2, key_id=key_id))
        assert _run(http, admin, "home:m")[-1]["type"] == "RUN_FINISHED"
        assert entered.keys == [BYOK_KEY, BYOK_KEY] and BYOK_KEY not in chosen_later.keys


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "base_url",
    ["http://169.254.169.254/v1", "http://10.0.0.7:8000/v1", "http://[::ffff:169.254.169.254]/v1"],
)
def test_a_provider_base_url_off_the_public_internet_is_refused(
    world: tuple[DevServer, FakeProvider, FakeProvider], base_url: str
) -> None:
    server, _, _ = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        refused = _provider(http, server.auth_for("boss", "org-admin"), name="probe", base_url=base_url, trust_tier=0)
    assert (refused.status_code, refused.json()["code"]) == (422, "address_not_allowed"), refused.text
