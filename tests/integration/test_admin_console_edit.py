"""What the admin console edits beyond creating things: a provider's base_url, key, tier and locality (with the
address and key-binding checks of creating one), "Test connection" against a provider's endpoint, the preview of a
workflow schedule's next fire times, and the approval audit with names, reasons and links. Org admins only; another
org's provider or workflow is 404."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.auth import auth_headers
from tests.email_tool import email_script
from tests.fake_provider import FakeProvider, running_fake_provider
from tests.scripted import scripted_model
from tests.sse import read_events

ADMIN = ("org-admin",)
PROVIDERS = "/api/v1/admin/providers"


@pytest.fixture
def fake(stack: object) -> Iterator[FakeProvider]:
    with running_fake_provider(models=("llama3.2", "qwen2.5-coder")) as server:
        yield server


async def _provider(http: httpx.AsyncClient, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    created = await http.post(PROVIDERS, json={"kind": "openai-compatible", "trust_tier": 2, **body}, headers=headers)
    assert created.status_code == 201, created.text
    return dict(created.json())


@pytest.mark.usefixtures("real_model_requests")  # the real OpenAI client, against the fake on loopback
async def test_an_admin_points_a_provider_at_a_new_base_url_and_tests_the_connection(
    http: httpx.AsyncClient, make_tenant: Any, fake: FakeProvider
) -> None:
    tenant = make_tenant(roles=ADMIN)
    headers = auth_headers(tenant, roles=ADMIN)
    unsaved = {"kind": "openai-compatible", "base_url": fake.base_url}  # tested before it is saved
    before = await http.post(f"{PROVIDERS}/test-connection", json=unsaved, headers=headers)
    assert before.status_code == 200, before.text
    assert (before.json()["status"], before.json()["models"]) == ("ok", ["llama3.2", "qwen2.5-coder"])
    private = {"kind": "openai-compatible", "base_url": "http://10.0.0.7:11434/v1"}
    refused = (await http.post(f"{PROVIDERS}/test-connection", json=private, headers=headers)).json()
    assert (refused["ok"], refused["status"]) == (False, "error") and "base_url" in refused["message"]
    for body, code in (({"kind": "openai-compatible"}, "base_url_required"), ({"kind": "bedrock"}, None)):
        answer = await http.post(f"{PROVIDERS}/test-connection", json=body, headers=headers)
        assert answer.status_code == 422 and answer.json()["code"] == (code or "connection_test_unsupported")
    member = auth_headers(tenant, roles=("user",))
    assert (await http.post(f"{PROVIDERS}/test-connection", json=unsaved, headers=member)).status_code == 403

    provider = await _provider(http, headers, name="ollama", base_url="http://127.0.0.1:9/v1")
    url = f"{PROVIDERS}/{provider['id']}"

    down = (await http.post(f"{url}/test-connection", headers=headers)).json()
    assert (down["ok"], down["status"], down["models"]) == (False, "error", [])
    assert "could not connect to 127.0.0.1:9" in down["message"]

    moved = await http.patch(
        url, json={"base_url": fake.base_url, "trust_tier": 1, "locality": "local"}, headers=headers
    )
    assert moved.status_code == 200, moved.text
    assert (moved.json()["base_url"], moved.json()["trust_tier"], moved.json()["locality"]) == (
        fake.base_url,
        1,
        "local",
    )
    listed = (await http.get(PROVIDERS, headers=headers)).json()["items"]
    assert [p["base_url"] for p in listed if p["id"] == provider["id"]] == [fake.base_url]

    tested = await http.post(f"{url}/test-connection", headers=headers)
    assert tested.status_code == 200, tested.text
    assert (tested.json()["ok"], tested.json()["status"]) == (True, "ok")
    assert tested.json()["models"] == ["llama3.2", "qwen2.5-coder"]
    assert "it lists 2 models" in tested.json()["message"]
    assert all("authorization" not in h for h in fake.model_list_headers)  # no key leaves the API

    # A run with its model goes to the new address.
    assert (await http.post(f"{url}/models", json={"name": "llama3.2"}, headers=headers)).status_code == 201
    chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
    body = {"message": "hello there", "model": "ollama:llama3.2", "mode": "inline"}
    started = await http.post(f"/api/v1/chats/{chat['id']}/runs", json=body, headers=headers)
    assert started.status_code == 202, started.text
    frames = await read_events(http, started.json()["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1].data
    assert "hello there" in fake.seen_text()


async def test_a_provider_edit_is_checked_like_a_new_provider(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant(roles=ADMIN)
    headers = auth_headers(tenant, roles=ADMIN)
    provider = await _provider(http, headers, name="vllm", base_url="http://127.0.0.1:9/v1")
    url = f"{PROVIDERS}/{provider['id']}"
    refusals = (
        ({"base_url": "http://169.254.169.254/latest"}, 422, "address_not_allowed"),
        ({"base_url": "http://10.0.0.7/v1"}, 422, "address_not_allowed"),
        ({"base_url": None}, 422, "base_url_required"),  # an OpenAI-compatible provider has no default endpoint
        ({"base_url": "ftp://example.com"}, 422, "invalid_input"),
        ({}, 422, "empty_update"),
        ({"trust_tier": None}, 422, "null_not_allowed"),
        ({"key_id": str(uuid.uuid4())}, 404, "key_not_found"),
    )
    for body, status, code in refusals:
        refused = await http.patch(url, json=body, headers=headers)
        assert (refused.status_code, refused.json()["code"]) == (status, code), (body, refused.text)
    unchanged = (await http.get(PROVIDERS, headers=headers)).json()["items"]
    assert [(p["base_url"], p["trust_tier"]) for p in unchanged] == [("http://127.0.0.1:9/v1", 2)]

    # A key entered for this endpoint stays with it: moving the provider with the key is refused.
    key = await http.post("/api/v1/keys", json={"provider": "vllm", "key": "sk-lab-key-12345678"}, headers=headers)
    assert (await http.patch(url, json={"key_id": key.json()["id"]}, headers=headers)).status_code == 200
    moved = await http.patch(url, json={"base_url": "http://127.0.0.1:10/v1"}, headers=headers)
    assert (moved.status_code, moved.json()["code"]) == (409, "key_endpoint_mismatch")
    without_key = await http.patch(url, json={"base_url": "http://127.0.0.1:10/v1", "key_id": None}, headers=headers)
    assert without_key.status_code == 200 and without_key.json()["key_id"] is None

    bedrock = await _provider(http, headers, name="bedrock", kind="bedrock", trust_tier=1)
    unsupported = await http.post(f"{PROVIDERS}/{bedrock['id']}/test-connection", headers=headers)
    assert (unsupported.status_code, unsupported.json()["code"]) == (422, "connection_test_unsupported")

    other = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    assert (await http.patch(url, json={"enabled": False}, headers=other)).status_code == 404
    assert (await http.post(f"{url}/test-connection", headers=other)).status_code == 404
    member = auth_headers(tenant, roles=("user",))
    assert (await http.post(f"{url}/test-connection", headers=member)).status_code == 403


async def test_a_schedule_preview_shows_the_next_fire_times(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant(roles=ADMIN)
    headers = auth_headers(tenant, roles=ADMIN)
    workflow = (await http.post("/api/v1/workflows", json={"name": "digest"}, headers=headers)).json()
    url = f"/api/v1/workflows/{workflow['id']}/schedule/preview"

    params = {"expression": "cron(30 7 ? * MON-FRI *)", "timezone": "Europe/Berlin"}
    cron = await http.get(url, params=params, headers=headers)
    assert cron.status_code == 200, cron.text
    fires = [datetime.fromisoformat(t) for t in cron.json()["next_fires"]]
    assert len(fires) == 5 and fires == sorted(fires) and fires[0] > datetime.now(UTC)
    local = [f.astimezone(ZoneInfo("Europe/Berlin")) for f in fires]
    assert all((t.hour, t.minute) == (7, 30) and t.isoweekday() <= 5 for t in local)
    assert len({t.date() for t in local}) == 5

    before = datetime.now(UTC)
    rate = (await http.get(url, params={"expression": "rate(2 hours)", "count": 3}, headers=headers)).json()
    steps = [datetime.fromisoformat(t) for t in rate["next_fires"]]
    assert rate["timezone"] == "UTC" and len(steps) == 3
    assert before + timedelta(hours=2) <= steps[0] <= datetime.now(UTC) + timedelta(hours=2)
    assert [b - a for a, b in zip(steps, steps[1:], strict=False)] == [timedelta(hours=2)] * 2

    for query, code in (
        ({"expression": "every day at 7"}, "invalid_schedule_expression"),
        ({"expression": "cron(0 7 * * * *)"}, "invalid_schedule_expression"),  # day-of-month and -week both set
        ({"expression": "rate(1 hours)"}, "invalid_schedule_expression"),
        ({"expression": "rate(5 minutes)", "timezone": "Mars/Olympus"}, "invalid_timezone"),
    ):
        refused = await http.get(url, params=query, headers=headers)
        assert (refused.status_code, refused.json()["code"]) == (422, code), (query, refused.text)

    nothing = (await http.get(url, headers=headers)).json()  # nothing sent, nothing saved: no fire times
    assert (nothing["expression"], nothing["next_fires"]) == (None, [])

    other = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    assert (await http.get(url, params={"expression": "rate(1 day)"}, headers=other)).status_code == 404


async def test_the_approval_audit_names_people_and_reasons_and_links_the_chat_and_run(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]]
) -> None:
    from personal_agent.lifecycle.launch import LaunchRequest, launch_run

    tenant = make_tenant(roles=ADMIN)
    headers = auth_headers(tenant, roles=ADMIN)
    chat = (await http.post("/api/v1/chats", json={"title": "audit"}, headers=headers)).json()
    with scripted_model(email_script) as (model, _):
        spec = await launch_run(
            LaunchRequest(
                org_id=tenant.org_id,
                user_id=tenant.user_id,
                chat_id=uuid.UUID(chat["id"]),
                message="mail bob",
                model=model,
                tools=("send_email",),
                mode="inline",
            )
        )
        events = f"/api/v1/runs/{spec.run_id}/events"
        frames: list[Any] = []
        while not any(f.data.get("name") == "approval_requested" for f in frames):
            frames = await read_events(http, events, headers, limit=len(frames) + 1)
            assert frames[-1].type not in ("RUN_FINISHED", "RUN_ERROR"), "the run ended without asking"
        asked = next(f for f in frames if f.data.get("name") == "approval_requested")
        body = {"decision": "deny", "reason": "bob left the team"}
        decided = await http.post(f"/api/v1/approvals/{asked.data['value']['approval_id']}", json=body, headers=headers)
        assert decided.status_code == 200, decided.text
        await read_events(http, events, headers)
    assert email_tool == []

    items = (await http.get("/api/v1/admin/approval-audit", headers=headers)).json()["items"]
    name = f"{tenant.subject}@example.test"  # no display name: the member's e-mail
    assert [(e["action"], e["actor_name"], e["owner_name"], e["reason"]) for e in items] == [
        ("denied", name, name, "bob left the team"),
        ("requested", None, name, None),
    ]
    assert {(e["chat_url"], e["run_url"]) for e in items} == {(f"/chats/{chat['id']}", f"/api/v1/runs/{spec.run_id}")}
