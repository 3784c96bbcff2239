"""Web Push for approvals: a person subscribes a browser (its `PushSubscription.toJSON()`); when one of their
runs waits for an approval, a push service started by the test gets one message per approval, encrypted to the
browser's keys (RFC 8291, decrypted here as the browser would) and signed with the server's VAPID key (RFC 8292,
checked as the push service would). The message names the tool and the chat, never the call's arguments. A
push service answering 410 makes the server forget the subscription. Subscriptions are the owner's only."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.push.notify import deliver
from personal_agent.settings import get_settings
from tests.auth import auth_headers, bearer, dev_issuer
from tests.email_tool import email_script, launch_email_run
from tests.push_browser import BrowserKeys, verified_vapid_claims
from tests.receiver import Receiver
from tests.scripted import scripted_model
from tests.sse import read_events

pytestmark = pytest.mark.timeout(120)
URL = "/api/v1/push/subscriptions"


@pytest.fixture
def push_service(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> Receiver:
    """The test's push service is on loopback: the operator adds it to the push services (`PA_PUSH_ALLOW_HOSTS`)."""
    monkeypatch.setattr(get_settings(), "push_allow_hosts", f"push.example.com,127.0.0.1:{receiver.port}")
    receiver.status = 201
    return receiver


async def _subscriptions(http: httpx.AsyncClient, headers: dict[str, str]) -> list[dict[str, Any]]:
    listed = await http.get(URL, headers=headers)
    assert listed.status_code == 200
    return list(listed.json()["items"])


async def _run_waiting_for_approval(http: httpx.AsyncClient, tenant: Any, model: str) -> tuple[Any, str]:
    spec = await launch_email_run(http, tenant, model)
    frames: list[Any] = []
    while not any(f.data.get("name") == "approval_requested" for f in frames):  # the run waits, its stream stays open
        frames = await read_events(
            http, f"/api/v1/runs/{spec.run_id}/events", auth_headers(tenant), limit=len(frames) + 1
        )
    approval = next(f.data["value"] for f in frames if f.data.get("name") == "approval_requested")
    return spec, str(approval["approval_id"])


async def test_the_server_key_is_served_and_a_subscription_is_the_callers_own(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    alice = make_tenant()
    headers = auth_headers(alice)
    config = (await http.get("/api/v1/push/config", headers=headers)).json()
    assert config["enabled"] is True and len(config["public_key"]) == 87  # 65 bytes, base64url
    browser = BrowserKeys().subscription("https://push.example.com/send/abc")
    created = await http.post(URL, json=browser, headers=headers)
    assert created.status_code == 201
    again = await http.post(URL, json=BrowserKeys().subscription(browser["endpoint"]), headers=headers)
    assert (again.status_code, again.json()["id"]) == (200, created.json()["id"])  # the same browser, new keys
    assert [s["id"] for s in await _subscriptions(http, headers)] == [created.json()["id"]]
    # Nobody else sees or removes it: a colleague in the same org, another org.
    colleague = bearer(dev_issuer().mint(subject=f"carol-{uuid.uuid4().hex[:8]}", orgs=[alice.slug]))
    for other in (colleague, auth_headers(make_tenant())):
        assert await _subscriptions(http, other) == []
        gone = await http.delete(f"{URL}/{created.json()['id']}", headers=other)
        assert (gone.status_code, gone.json()["code"]) == (404, "push_subscription_not_found")
    assert (await http.delete(f"{URL}/{created.json()['id']}", headers=headers)).status_code == 204
    assert await _subscriptions(http, headers) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"endpoint": "http://push.example.com/send/abc"}, "https"),  # not https, not allow-listed
        ({"endpoint": "ftp://push.example.com/x"}, "https"),
        ({"keys": {"p256dh": "not-a-key", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "p256dh"),
        ({"keys": {"p256dh": "B" * 87, "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "p256dh"),  # not a point on P-256
        ({"keys": {"p256dh": None, "auth": "short"}}, "auth"),  # a real key, an auth secret of 3 bytes
    ],
)
async def test_a_bad_subscription_is_refused_and_nothing_is_stored(
    http: httpx.AsyncClient, make_tenant: Any, change: dict[str, Any], field: str
) -> None:
    headers = auth_headers(make_tenant())
    body = BrowserKeys().subscription("https://push.example.com/send/abc")
    if "keys" in change and change["keys"]["p256dh"] is None:
        change = {"keys": {**body["keys"], "auth": change["keys"]["auth"]}}
    refused = await http.post(URL, json={**body, **change}, headers=headers)
    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == "invalid_push_subscription"
    assert field in refused.json()["message"]
    assert await _subscriptions(http, headers) == []


async def test_push_is_refused_when_the_server_has_no_key(
    http: httpx.AsyncClient, make_tenant: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "vapid_public_key", "")
    headers = auth_headers(make_tenant())
    assert (await http.get("/api/v1/push/config", headers=headers)).json() == {"enabled": False, "public_key": None}
    refused = await http.post(URL, json=BrowserKeys().subscription("https://push.example.com/x"), headers=headers)
    assert (refused.status_code, refused.json()["code"]) == (409, "push_not_configured")


async def test_a_pending_approval_reaches_the_owners_browser_encrypted_and_signed(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]], push_service: Receiver
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    browser = BrowserKeys()
    subscribed = await http.post(URL, json=browser.subscription(f"{push_service.url}/device-1"), headers=headers)
    assert subscribed.status_code == 201
    server_key = (await http.get("/api/v1/push/config", headers=headers)).json()["public_key"]
    with scripted_model(email_script) as (model, _):
        spec, approval_id = await _run_waiting_for_approval(http, tenant, model)
        (request_headers, body) = push_service.wait_for(1)[0]
    assert request_headers["content-encoding"] == "aes128gcm" and int(request_headers["ttl"]) > 0
    claims = verified_vapid_claims(request_headers["authorization"], server_key)
    assert claims["aud"] == f"http://127.0.0.1:{push_service.port}" and claims["sub"].startswith("mailto:")
    assert b"send_email" not in body  # the push service sees ciphertext only
    message = browser.decrypt(body)
    assert message == {
        "type": "approval_requested",
        "title": "Approval needed",
        "body": "send_email is waiting for your approval",
        "url": f"/chats/{spec.chat_id}",
        "tag": f"approval-{approval_id}",
        "approval_id": approval_id,
        "run_id": str(spec.run_id),
        "chat_id": str(spec.chat_id),
    }
    assert "bob@example.com" not in str(message)  # never the call's arguments
    assert email_tool == []  # a notification approves nothing


async def test_a_browser_the_push_service_says_is_gone_is_forgotten(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]], push_service: Receiver
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    push_service.status = 410
    gone = (await http.post(URL, json=BrowserKeys().subscription(f"{push_service.url}/old"), headers=headers)).json()
    assert [s["id"] for s in await _subscriptions(http, headers)] == [gone["id"]]
    with scripted_model(email_script) as (model, _):
        spec, approval_id = await _run_waiting_for_approval(http, tenant, model)
        # The deliver function's work for this run, awaited here (the queue's poller may be doing it too: either
        # one meets the 410 and forgets the browser, and this returns after its own try).
        await deliver(spec.org_id, {"run_id": str(spec.run_id), "approval_ids": [approval_id]})
    assert push_service.requests, "the push service was never asked"
    assert await _subscriptions(http, headers) == []


async def _question_script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    if not any(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts):
        form = json.dumps({"question": "Which secret project?", "choices": ["Atlas", "Borealis"]})
        yield {0: DeltaToolCall(name="ask_user", json_args=form, tool_call_id="q1")}
    else:
        yield "Thanks."


async def test_a_question_reaches_the_owners_browser_without_its_text(
    http: httpx.AsyncClient, make_tenant: Any, push_service: Receiver
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    browser = BrowserKeys()
    subscribed = await http.post(URL, json=browser.subscription(f"{push_service.url}/device-q"), headers=headers)
    assert subscribed.status_code == 201
    with scripted_model(_question_script) as (model, _):
        chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
        body = {"message": "start the project", "model": model, "tools": ["ask_user"]}
        started = await http.post(f"/api/v1/chats/{chat['id']}/runs", json=body, headers=headers)
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        frames: list[Any] = []
        while not any(f.data.get("name") == "question_asked" for f in frames):  # the run waits for its answer
            frames = await read_events(http, f"/api/v1/runs/{run_id}/events", headers, limit=len(frames) + 1)
        question_id = next(f.data["value"]["question_id"] for f in frames if f.data.get("name") == "question_asked")
        (_, sent) = push_service.wait_for(1)[0]
    message = browser.decrypt(sent)
    assert message == {
        "type": "approval_requested",
        "title": "A question for you",
        "body": "A run is waiting for your answer",
        "url": f"/chats/{chat['id']}",
        "tag": f"approval-{question_id}",
        "approval_id": question_id,
        "run_id": run_id,
        "chat_id": chat["id"],
    }
    assert "secret" not in json.dumps(message).lower() and "Atlas" not in json.dumps(message)  # never its text
