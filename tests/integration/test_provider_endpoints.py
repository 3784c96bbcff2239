"""Write-only secrets stay where they were entered (issue 28, item 5): a BYOK key opens only for the endpoint it was
bound to, even when the database says otherwise (the binding is in the KMS encryption context, not only a check),
and a provider's base_url is address-checked when a model is built, not only when it was saved."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from personal_agent.settings import get_settings
from tests import db_state
from tests.auth import auth_headers
from tests.fake_provider import FakeProvider, running_fake_provider
from tests.sse import Frame, read_events

BYOK_KEY = "sk-org-bound-key-7d3e9a1c5b"

pytestmark = pytest.mark.usefixtures("real_model_requests")  # the real OpenAI client, against loopback servers


@pytest.fixture
def servers(stack: object) -> Iterator[tuple[FakeProvider, FakeProvider]]:
    with running_fake_provider() as entered, running_fake_provider() as chosen_later:
        yield entered, chosen_later


async def _provider(http: httpx.AsyncClient, headers: dict[str, str], **body: Any) -> str:
    created = await http.post(
        "/api/v1/admin/providers", headers=headers, json={"kind": "openai-compatible", "trust_tier": 2, **body}
    )
    assert created.status_code == 201, created.text
    models_url = f"/api/v1/admin/providers/{created.json()['id']}/models"
    added = await http.post(models_url, headers=headers, json={"name": "m"})
    assert added.status_code == 201, added.text
    return f"{body['name']}:m"


async def _run(http: httpx.AsyncClient, headers: dict[str, str], model: str) -> tuple[list[Frame], dict[str, Any]]:
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    started = await http.post(
        f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi", "model": model, "mode": "inline"}, headers=headers
    )
    assert started.status_code == 202, started.text
    frames = await read_events(http, started.json()["events_url"], headers)
    run = (await http.get(f"/api/v1/runs/{started.json()['run_id']}", headers=headers)).json()
    return frames, run


async def test_a_key_does_not_open_for_a_base_url_changed_behind_the_apis_back(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, servers: tuple[FakeProvider, FakeProvider]
) -> None:
    entered, chosen_later = servers
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    key = await http.post("/api/v1/keys", json={"provider": "acme", "key": BYOK_KEY}, headers=headers)
    model = await _provider(http, headers, name="acme", base_url=entered.base_url, key_id=key.json()["id"])
    frames, _ = await _run(http, headers, model)
    assert frames[-1].type == "RUN_FINISHED" and entered.keys == [BYOK_KEY]

    # Whatever path moves the provider (a bug, a restored backup, hand-written SQL) and even if the key's recorded
    # endpoint moves with it: KMS hands out the data key only for the endpoint it was wrapped with.
    db_state.move_provider(admin_url, tenant.org_id, chosen_later.base_url)
    frames, run = await _run(http, headers, model)
    assert frames[-1].type == "RUN_ERROR" and frames[-1].data["code"] == "key_endpoint_mismatch"
    assert run["status"] == "failed" and run["error"]["code"] == "key_endpoint_mismatch"
    assert chosen_later.requests == [] and chosen_later.keys == []
    assert entered.keys == [BYOK_KEY]


async def test_a_provider_address_is_checked_again_when_its_model_is_built(
    http: httpx.AsyncClient, make_tenant: Any, servers: tuple[FakeProvider, FakeProvider], monkeypatch: Any
) -> None:
    entered, _ = servers
    headers = auth_headers(make_tenant(roles=("org-admin",)), roles=("org-admin",))
    model = await _provider(http, headers, name="local", base_url=entered.base_url)
    monkeypatch.setattr(get_settings(), "provider_allow_hosts", "")  # the operator takes loopback off the list
    frames, run = await _run(http, headers, model)
    assert frames[-1].type == "RUN_ERROR" and frames[-1].data["code"] == "address_not_allowed"
    assert run["error"]["code"] == "address_not_allowed"
    assert entered.requests == []
    refused = await http.post(
        "/api/v1/admin/providers",
        headers=headers,
        json={"name": "again", "kind": "openai-compatible", "base_url": entered.base_url, "trust_tier": 2},
    )
    assert (refused.status_code, refused.json()["code"]) == (422, "address_not_allowed")
    monkeypatch.setattr(get_settings(), "provider_allow_hosts", "127.0.0.1,169.254.169.254")
    metadata = await http.post(
        "/api/v1/admin/providers",
        headers=headers,
        json={"name": "meta", "kind": "openai", "base_url": "http://169.254.169.254/v1", "trust_tier": 2},
    )
    assert (metadata.status_code, metadata.json()["code"]) == (422, "address_not_allowed")  # metadata: never
