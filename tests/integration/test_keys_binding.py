"""Keys are bound to their endpoints: the platform's key goes only to the platform's own endpoint, an org's
base_url gets the org's key or none, a deleted key disables its providers, and platform-key usage is
priced at the platform's price whatever an admin set."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from typing import Any

import httpx
import psycopg
import pytest
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from personal_agent.governance.model_build import build_one
from personal_agent.spec.run_spec import ModelRef
from tests.auth import auth_headers
from tests.live_server import LiveServer
from tests.sse import read_events

PLATFORM_OPENAI_KEY = "sk-platform-openai-4c1d9e7a2b"
PLATFORM_ANTHROPIC_KEY = "sk-ant-platform-8e2f6a0c4d"
BYOK_KEY = "sk-org-own-key-5a7c9e1b3d"  # the org's own key (test_governance checks that it is sent)

# Every test here builds the real OpenAI/Anthropic clients and lets them talk to the fake endpoints below.
pytestmark = pytest.mark.usefixtures("real_model_requests")


class FakeEndpoint:
    """An OpenAI-compatible server on loopback: answers every request and records the key it was sent."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.server = LiveServer(Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])]))

    async def chat(self, request: Request) -> Any:
        self.keys.append(request.headers.get("authorization", "").removeprefix("Bearer "))
        model = (await request.json())["model"]
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi."}, "finish_reason": None}]},
            {
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
            },
        ]

        async def frames() -> AsyncIterator[str]:
            for chunk in chunks:
                body = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model, **chunk}
                yield f"data: {json.dumps(body)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")


@pytest.fixture
def endpoints(stack: object) -> Iterator[tuple[FakeEndpoint, FakeEndpoint]]:
    """(the platform's own OpenAI endpoint, an org-chosen server), with the platform's keys configured."""
    from personal_agent.settings import get_settings

    platform, org = FakeEndpoint(), FakeEndpoint()
    platform.server.start()
    org.server.start()
    values = {
        "OPENAI_API_KEY": PLATFORM_OPENAI_KEY,
        "OPENAI_BASE_URL": f"{platform.server.url}/v1",  # the platform's endpoint, so nothing leaves the machine
        "ANTHROPIC_API_KEY": PLATFORM_ANTHROPIC_KEY,
    }
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    get_settings.cache_clear()
    try:
        yield platform, org
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        get_settings.cache_clear()
        platform.server.stop()
        org.server.stop()


async def _provider(http: httpx.AsyncClient, headers: dict[str, str], model: dict[str, Any], **body: Any) -> str:
    created = await http.post("/api/v1/admin/providers", json=body, headers=headers)
    assert created.status_code == 201, created.text
    added = await http.post(f"/api/v1/admin/providers/{created.json()['id']}/models", json=model, headers=headers)
    assert added.status_code == 201, added.text
    return f"{body['name']}:{model['name']}"


async def _run(http: httpx.AsyncClient, headers: dict[str, str], model: str, classification: str) -> dict[str, Any]:
    chat = (await http.post("/api/v1/chats", json={"classification": classification}, headers=headers)).json()
    started = await http.post(
        f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi", "model": model, "mode": "inline"}, headers=headers
    )
    assert started.status_code == 202, started.text
    frames = await read_events(http, started.json()["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    return dict(started.json())


@pytest.mark.parametrize("kind", ["openai-compatible", "openai"])
async def test_the_platform_key_never_reaches_an_org_chosen_base_url(
    http: httpx.AsyncClient, make_tenant: Any, endpoints: tuple[FakeEndpoint, FakeEndpoint], kind: str
) -> None:
    platform, org = endpoints
    headers = auth_headers(make_tenant(roles=("org-admin",)), roles=("org-admin",))
    model = await _provider(
        http,
        headers,
        {"name": "m1"},
        name="own-server",
        kind=kind,
        base_url=f"{org.server.url}/v1",
        trust_tier=2,
    )
    await _run(http, headers, model, "restricted")  # tier 2: no platform model is even a fallback
    assert org.keys == ["none"]  # no BYOK key: nothing, never the platform's
    assert platform.keys == []


async def test_built_models_carry_no_platform_key_off_the_platform_endpoint(
    endpoints: tuple[FakeEndpoint, FakeEndpoint],
) -> None:
    org_id = uuid.uuid4()
    for kind in ("openai", "openai-compatible", "anthropic"):
        ref = ModelRef(
            id=f"own:{kind}", provider="own", kind=kind, tier=2, model_name="m", base_url="http://127.0.0.1:9/v1"
        )  # loopback: the tests' operator allow-lists it for org providers (a VPC address is refused, see below)
        model: Any = await build_one(org_id, ref, 0)
        assert model.client.api_key == "none", kind
    platform = ModelRef(
        id="openai:gpt-4o", provider="openai", kind="openai", tier=1, model_name="gpt-4o", platform_key=True
    )
    assert (await build_one(org_id, platform, 0)).client.api_key == PLATFORM_OPENAI_KEY  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        ModelRef(
            id="x:y",
            provider="x",
            kind="openai",
            tier=1,
            model_name="y",
            base_url="http://10.9.8.7/v1",
            platform_key=True,
        )


async def test_deleting_a_key_disables_its_providers_instead_of_falling_back(
    http: httpx.AsyncClient, make_tenant: Any, endpoints: tuple[FakeEndpoint, FakeEndpoint]
) -> None:
    platform, org = endpoints
    headers = auth_headers(make_tenant(roles=("org-admin",)), roles=("org-admin",))
    key = await http.post("/api/v1/keys", json={"provider": "openai", "key": BYOK_KEY}, headers=headers)
    model = await _provider(
        http, headers, {"name": "gpt-4o-mini"}, name="team-openai", kind="openai", trust_tier=1, key_id=key.json()["id"]
    )
    assert (await http.delete(f"/api/v1/keys/{key.json()['id']}", headers=headers)).status_code == 204
    providers = (await http.get("/api/v1/admin/providers", headers=headers)).json()["items"]
    assert [(p["name"], p["enabled"]) for p in providers] == [("team-openai", False)]
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    refused = await http.post(
        f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi", "model": model}, headers=headers
    )
    assert (refused.status_code, refused.json()["code"]) == (422, "unknown_model")
    assert platform.keys == [] and org.keys == []


async def test_an_admin_price_cannot_make_platform_key_usage_free(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, endpoints: tuple[FakeEndpoint, FakeEndpoint]
) -> None:
    platform, _ = endpoints
    headers = auth_headers(make_tenant(roles=("org-admin",)), roles=("org-admin",))
    model = await _provider(
        http,
        headers,
        {"name": "gpt-4o-mini", "input_price": "0", "output_price": "0"},
        name="openai",  # the platform's endpoint with the platform's key: no base_url, no key of its own
        kind="openai",
        trust_tier=1,
    )
    run = await _run(http, headers, model, "confidential")
    assert platform.keys == [PLATFORM_OPENAI_KEY]
    with psycopg.connect(admin_url) as conn:
        cost, version = conn.execute(
            "SELECT cost_usd, price_version FROM usage_records WHERE run_id = %s", [run["run_id"]]
        ).fetchone()
    assert cost == (12 * Decimal("0.15") + 5 * Decimal("0.6")) / 1_000_000  # the platform's price for 12 + 5 tokens
    assert version == "platform openai:gpt-4o-mini"
