"""A run's model at an org provider's base_url is called through a client kept by the worker: the next run's
request goes over the connection the last one opened (no new TCP or TLS handshake before the first token), still
only to the address checked when its model was built."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.fake_provider import FakeProvider, running_fake_provider
from tests.sse import read_events

pytestmark = pytest.mark.usefixtures("real_model_requests")  # the real OpenAI client, against a loopback server


@pytest.fixture
def provider(stack: object) -> Iterator[FakeProvider]:
    with running_fake_provider() as server:
        yield server


async def _answer(http: httpx.AsyncClient, headers: dict[str, str], model: str) -> str:
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    body = {"message": "hi", "model": model, "mode": "inline"}
    started = await http.post(f"/api/v1/chats/{chat['id']}/runs", json=body, headers=headers)
    assert started.status_code == 202, started.text
    frames = await read_events(http, started.json()["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    return "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")


async def test_runs_of_one_provider_reuse_its_connection(
    http: httpx.AsyncClient, make_tenant: Any, provider: FakeProvider, monkeypatch: Any
) -> None:
    headers = auth_headers(make_tenant(roles=("org-admin",)), roles=("org-admin",))
    created = await http.post(
        "/api/v1/admin/providers",
        headers=headers,
        json={"name": "kept", "kind": "openai-compatible", "trust_tier": 2, "base_url": provider.base_url},
    )
    assert created.status_code == 201, created.text
    models_url = f"/api/v1/admin/providers/{created.json()['id']}/models"
    added = await http.post(models_url, headers=headers, json={"name": "m"})
    assert added.status_code == 201, added.text

    assert await _answer(http, headers, "kept:m") == "You said: hi"
    assert await _answer(http, headers, "kept:m") == "You said: hi"
    assert len(provider.peers) == 2 and provider.peers[0] == provider.peers[1]  # one connection, used twice

    monkeypatch.setattr(get_settings(), "provider_allow_hosts", "")  # the kept client does not skip the check
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    body = {"message": "hi", "model": "kept:m", "mode": "inline"}
    started = await http.post(f"/api/v1/chats/{chat['id']}/runs", json=body, headers=headers)
    frames = await read_events(http, started.json()["events_url"], headers)
    assert frames[-1].type == "RUN_ERROR" and frames[-1].data["code"] == "address_not_allowed"
    assert len(provider.peers) == 2
