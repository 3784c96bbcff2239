"""Governance end to end: BYOK keys stay secret, fallback models answer, budgets stop runs, the
confidence gate asks before acting, and the gate refuses confidential data to tier-0 providers."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from typing import Any

import boto3
import httpx
import psycopg
import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from personal_agent.bus.key_names import run_stream
from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.live_server import LiveServer
from tests.runs import start_run
from tests.scripted import scripted_model, text_then_tool
from tests.sfn import wait_for_execution
from tests.sse import read_events

BYOK_KEY = "sk-byok-7f3a9c1e5d2b8a4f6e0c"


class FakeOpenAI:
    """An OpenAI-compatible endpoint on loopback that streams a reply and records the keys it was sent."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.server = LiveServer(Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])]))

    async def chat(self, request: Request) -> Any:
        self.keys.append(request.headers.get("authorization", "").removeprefix("Bearer "))
        body = await request.json()
        if self.keys[-1] != BYOK_KEY:
            return JSONResponse({"error": {"message": "bad key"}}, status_code=401)
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": word}, "finish_reason": None}]}
            for word in ("Hello ", "from ", "your ", "own ", "key.")
        ]
        chunks.append(
            {
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
            }
        )

        async def frames() -> AsyncIterator[str]:
            for chunk in chunks:
                yield (
                    "data: "
                    + json.dumps(
                        {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"], **chunk}
                    )
                    + "\n\n"
                )
            yield "data: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    fake.server.start()
    yield fake
    fake.server.stop()


@pytest.mark.usefixtures("real_model_requests")  # the real OpenAI client, against the fake server
async def test_a_byok_key_is_used_and_never_appears_in_logs_events_or_history(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    fake_openai: FakeOpenAI,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    key = await http.post(
        "/api/v1/keys", json={"provider": "acme-llm", "label": "ours", "key": BYOK_KEY}, headers=headers
    )
    assert key.status_code == 201, key.text
    assert BYOK_KEY not in key.text and key.json()["hint"] == "…" + BYOK_KEY[-4:]
    provider = await http.post(
        "/api/v1/admin/providers",
        headers=headers,
        json={
            "name": "acme-llm",
            "kind": "openai-compatible",
            "base_url": f"{fake_openai.server.url}/v1",
            "trust_tier": 2,
            "locality": "region",
            "key_id": key.json()["id"],
        },
    )
    assert provider.status_code == 201, provider.text
    model = await http.post(
        f"/api/v1/admin/providers/{provider.json()['id']}/models",
        headers=headers,
        json={"name": "acme-1", "tags": ["frontier"], "quality": 15},
    )
    assert model.status_code == 201, model.text
    chat = (await http.post("/api/v1/chats", json={"classification": "confidential"}, headers=headers)).json()
    started = await http.post(
        f"/api/v1/chats/{chat['id']}/runs",
        headers=headers,
        json={"message": "hi", "model": "acme-llm:acme-1", "mode": "durable"},
    )
    assert started.status_code == 202, started.text
    frames = await read_events(http, started.json()["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    assert "".join(f.data.get("delta", "") for f in frames) == "Hello from your own key."
    assert fake_openai.keys == [BYOK_KEY]  # decrypted inside the step and sent to the provider only

    run_id = started.json()["run_id"]
    with psycopg.connect(admin_url) as conn:
        arn = conn.execute("SELECT execution_arn FROM runs WHERE id = %s", [run_id]).fetchone()[0]
        stored = json.dumps(
            list(
                conn.execute(
                    "SELECT spec::text, routing::text FROM runs WHERE id = %s UNION ALL "
                    "SELECT messages::text, state::text FROM run_checkpoints WHERE run_id = %s",
                    [run_id, run_id],
                )
            )
        )
        ciphertext = conn.execute("SELECT ciphertext FROM provider_keys WHERE org_id = %s", [tenant.org_id]).fetchone()
    sfn = boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    wait_for_execution(sfn, arn)
    history = json.dumps(sfn.get_execution_history(executionArn=arn)["events"], default=str)
    import redis

    from personal_agent.settings import get_settings

    with redis.from_url(str(get_settings().redis_url)) as r:
        events = json.dumps([str(v) for _, v in r.xrange(run_stream(tenant.org_id, run_id))])
    api_views = json.dumps(
        [
            (await http.get(u, headers=headers)).text
            for u in (
                "/api/v1/keys",
                "/api/v1/admin/providers",
                f"/api/v1/runs/{run_id}",
                f"/api/v1/chats/{chat['id']}/messages",
            )
        ]
    )
    out, err = capfd.readouterr()
    logs = caplog.text + out + err
    for place, text in {"history": history, "events": events, "stored": stored, "api": api_views, "logs": logs}.items():
        assert BYOK_KEY not in text, place
    assert BYOK_KEY.encode() not in bytes(ciphertext[0])


@pytest.fixture
def failing_primary() -> Iterator[str]:
    async def broken(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        raise ModelHTTPError(503, "primary-model", "overloaded")
        yield ""  # pragma: no cover - makes this an async generator

    register_model(
        "flaky:primary",
        lambda: FunctionModel(stream_function=broken, model_name="primary-model"),
        tags=("frontier",),
        quality=20,
        provider="flaky",
    )
    yield "flaky:primary"
    unregister_model("flaky:primary")


async def test_the_fallback_answers_when_the_primary_fails(
    http: httpx.AsyncClient, make_tenant: Any, failing_primary: str
) -> None:
    headers = auth_headers(make_tenant())

    async def good(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "fallback here"

    register_model(
        "steady:backup",
        lambda: FunctionModel(stream_function=good, model_name="backup-model"),
        tags=("frontier",),
        quality=19,
        provider="steady",
    )
    try:
        run = await start_run(http, headers, failing_primary)
        frames = await read_events(http, run["events_url"], headers)
    finally:
        unregister_model("steady:backup")
    assert frames[-1].type == "RUN_FINISHED"
    assert "".join(f.data.get("delta", "") for f in frames) == "fallback here"
    view = (await http.get(run["status_url"], headers=headers)).json()
    assert view["model"] == "flaky:primary"
    assert view["model_chain"][0] == "flaky:primary" and "steady:backup" in view["model_chain"]
    assert view["answered_model"] == "backup-model"


async def test_a_run_stops_before_the_request_that_would_cross_the_budget(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    budget = await http.put("/api/v1/admin/budgets", json={"scope": "org", "monthly_usd": "0.000001"}, headers=headers)
    assert budget.status_code == 200, budget.text
    with scripted_model(text_then_tool(rounds=2), model_name="gpt-4o-mini") as (model, recorder):
        run = await start_run(http, headers, model)
        frames = await read_events(http, run["events_url"], headers)
        assert recorder.calls == [1]  # the second request was never sent
        assert frames[-1].type == "RUN_ERROR" and frames[-1].data["code"] == "budget_exceeded"
        with psycopg.connect(admin_url) as conn:
            spent = conn.execute(
                "SELECT count(*), sum(cost_usd) FROM usage_records WHERE run_id = %s", [run["run_id"]]
            ).fetchone()
        assert spent[0] == 1 and spent[1] > Decimal("0.000001")  # the usage so far is kept
        again = await http.post(
            f"/api/v1/chats/{run['chat_id']}/runs", json={"message": "more", "model": model}, headers=headers
        )
    assert (again.status_code, again.json()["code"]) == (429, "budget_exceeded")
    assert again.json()["details"]["cap"] == "org"
    member = auth_headers(tenant)
    assert (
        await http.put("/api/v1/admin/budgets", json={"scope": "org", "monthly_usd": "5"}, headers=member)
    ).status_code == 403


def router_model(confidence: float) -> FunctionModel:
    def classify(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = {"intent": "post a note", "acts_on_world": True, "confidence": confidence}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    return FunctionModel(classify, model_name="router")


async def writer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    if any(getattr(p, "part_kind", "") == "tool-return" for m in messages for p in m.parts):
        yield "Posted."
    else:
        yield {0: DeltaToolCall(name="post_note", json_args='{"text": "ship it"}', tool_call_id="n1")}


@pytest.mark.parametrize("confidence", [0.95, 0.3])
async def test_the_confidence_gate_asks_before_acting(
    http: httpx.AsyncClient, make_tenant: Any, post_note: list[str], confidence: float
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    register_model("router:cheap", lambda: router_model(confidence), tags=("cheap",), quality=2)
    try:
        settings = await http.put(
            "/api/v1/admin/settings",
            headers=headers,
            json={"tier_floor": 0, "confidence_threshold": 0.8, "routing_model": "router:cheap"},
        )
        assert settings.status_code == 200, settings.text
        from personal_agent.lifecycle.launch import LaunchRequest, launch_run

        chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
        with scripted_model(writer) as (model, _):
            spec = await launch_run(
                LaunchRequest(
                    org_id=tenant.org_id,
                    user_id=tenant.user_id,
                    chat_id=chat["id"],
                    message="post 'ship it' to the team",
                    model=model,
                    tools=("post_note",),
                )
            )
            assert spec.mode == "inline" and spec.router_model is not None
            url = f"/api/v1/runs/{spec.run_id}/events"
            frames = await read_events(http, url, headers, limit=None) if confidence > 0.8 else []
            if confidence < 0.8:
                while not any(f.data.get("name") == "approval_requested" for f in frames):
                    frames = await read_events(http, url, headers, limit=len(frames) + 1)
                assert post_note == []  # low confidence: the acting tool waits for a person
                approval = next(f for f in frames if f.data.get("name") == "approval_requested")
                decided = await http.post(
                    f"/api/v1/approvals/{approval.data['value']['approval_id']}",
                    json={"decision": "approve"},
                    headers=headers,
                )
                assert decided.status_code == 200
                frames = await read_events(http, url, headers)
    finally:
        unregister_model("router:cheap")
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert post_note == ["ship it"]
    view = (await http.get(f"/api/v1/runs/{spec.run_id}", headers=headers)).json()
    assert view["routing"]["confidence"] == confidence


async def test_confidential_chat_cannot_launch_on_a_tier_0_model(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    register_model("public:open", lambda: FunctionModel(stream_function=None), tier=0, provider="public")
    try:
        chat = (await http.post("/api/v1/chats", json={"classification": "confidential"}, headers=headers)).json()
        refused = await http.post(
            f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi", "model": "public:open"}, headers=headers
        )
    finally:
        unregister_model("public:open")
    assert (refused.status_code, refused.json()["code"]) == (403, "classification_blocked")
    with psycopg.connect(admin_url) as conn:
        assert conn.execute("SELECT count(*) FROM runs WHERE org_id = %s", [tenant.org_id]).fetchone() == (0,)


async def test_usage_export_is_csv_with_unknown_costs_left_empty(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(text_then_tool(rounds=1)) as (model, _):
        run = await start_run(http, headers, model)
        await read_events(http, run["events_url"], headers)
    export = await http.get("/api/v1/usage/export", headers=headers)
    assert export.status_code == 200 and export.headers["content-type"].startswith("text/csv")
    lines = export.text.strip().splitlines()
    assert lines[0].startswith("created_at,run_id,request_index") and len(lines) == 3
    assert all(line.split(",")[11] == "" for line in lines[1:])  # cost_usd unknown, not 0


async def test_a_users_default_model_is_used_when_a_run_names_none(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    assert (await http.get("/api/v1/me/settings", headers=headers)).json() == {"default_model": None}
    unknown = await http.put("/api/v1/me/settings", json={"default_model": "nope:nope"}, headers=headers)
    assert (unknown.status_code, unknown.json()["code"]) == (422, "unknown_model")
    with scripted_model(text_then_tool(rounds=0)) as (model, recorder):
        saved = await http.put("/api/v1/me/settings", json={"default_model": model}, headers=headers)
        assert saved.json() == {"default_model": model}
        chat = (await http.post("/api/v1/chats", json={}, headers=headers)).json()
        started = await http.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi"}, headers=headers)
        assert started.status_code == 202 and started.json()["model"] == model
        await read_events(http, started.json()["events_url"], headers)
    assert len(recorder.calls) == 1
