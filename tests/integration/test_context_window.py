"""Long chats fit the model: over a 50-turn chat a model with a small context window never receives more tokens
than its window; older turns are summarised by the cheap routing model into a stored summary message whose usage
is in the ledger; the run's stream and the transcript say when older turns are summarised, and the run's trace shows
the history as it was sent."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import psycopg
import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.sse import read_events

WINDOW = 3000
TURNS = 50


def sent_tokens(messages: list[ModelMessage], info: AgentInfo) -> int:
    """What the model was sent, counted as the platform promises (a token per 3 characters, rounded up)."""
    chars = len(ModelMessagesTypeAdapter.dump_json(messages)) + len(info.instructions or "")
    return -(-chars // 3)


@pytest.fixture
def router() -> Iterator[list[str]]:
    """A cheap routing model: classifies requests, and writes numbered summaries (the texts it was given)."""
    asked: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if info.output_tools:  # the classification
            args = {"intent": "chat", "acts_on_world": False, "confidence": 0.9}
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
        prompt = str(next(p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart)))
        asked.append(prompt)
        return ModelResponse(parts=[TextPart(f"SUMMARY#{len(asked)}: the user counted turns.")], model_name="router")

    register_model("router:summaries", lambda: FunctionModel(respond, model_name="router"), tags=("cheap",))
    yield asked
    unregister_model("router:summaries")


async def test_a_fifty_turn_chat_never_exceeds_a_small_window(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, router: list[str]
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    settings = await http.put(
        "/api/v1/admin/settings",
        headers=headers,
        json={"tier_floor": 0, "confidence_threshold": 0.8, "routing_model": "router:summaries"},
    )
    assert settings.status_code == 200, settings.text
    received: list[tuple[int, list[ModelMessage]]] = []

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        received.append((sent_tokens(messages, info), messages))
        yield f"Answer {len(received)}: " + "noted, " * 20

    register_model("small:window", lambda: FunctionModel(stream_function=answer), context_window=WINDOW)
    chat_id = (await http.post("/api/v1/chats", json={"title": "long"}, headers=headers)).json()["id"]
    summarised: list[dict[str, Any]] = []
    try:
        for turn in range(TURNS):
            started = await http.post(
                f"/api/v1/chats/{chat_id}/runs",
                json={"message": f"turn {turn}: " + "counting along " * 12, "model": "small:window", "tools": []},
                headers=headers,
            )
            assert started.status_code == 202, started.text
            frames = await read_events(http, started.json()["events_url"], headers)
            assert frames[-1].type == "RUN_FINISHED", frames[-1].data
            summarised += [f.data["value"] for f in frames if f.data.get("name") == "history_summarised"]
    finally:
        unregister_model("small:window")

    assert len(received) == TURNS
    assert max(tokens for tokens, _ in received) <= WINDOW
    # Without trimming the last request would have carried all fifty turns: far more than the window.
    last_prompts = [p.content for m in received[-1][1] if isinstance(m, ModelRequest) for p in m.parts]
    assert f"turn {TURNS - 1}: " in str(last_prompts[-1]) and not any("turn 0:" in str(p) for p in last_prompts)
    # The newest summary stands in for the older turns, as a user-role part (data, not the platform's instructions).
    lead = next(p for p in received[-1][1][0].parts if isinstance(p, UserPromptPart) and "SUMMARY#" in str(p.content))
    assert f"SUMMARY#{len(router)}" in str(lead.content)
    assert not any(isinstance(p, SystemPromptPart) and "SUMMARY#" in p.content for p in received[-1][1][0].parts)
    assert router and summarised and len(summarised) == len(router)
    assert any("Earlier summary: SUMMARY#" in asked for asked in router[1:])  # later summaries build on earlier

    with psycopg.connect(admin_url) as conn:
        summaries = conn.execute(
            "SELECT id, parent_id, run_id, message->'parts'->0->>'content' FROM messages"
            " WHERE chat_id = %s AND kind = 'summary' ORDER BY id",
            [chat_id],
        ).fetchall()
        usage = conn.execute(
            "SELECT run_id, request_index, model_name, input_tokens, output_tokens FROM usage_records"
            " WHERE chat_id = %s AND request_index <= -2 ORDER BY id",
            [chat_id],
        ).fetchall()
    assert [s[3] for s in summaries] == [f"SUMMARY#{i + 1}: the user counted turns." for i in range(len(router))]
    assert [s[0] for s in summaries] == [e["summary_message_id"] for e in summarised]
    # Each summary's request is in the ledger, under the run that made it, like any other request.
    assert [(u[0], u[2]) for u in usage] == [(s[2], "router") for s in summaries]
    assert all(u[1] == -2 and u[3] > 0 and u[4] > 0 for u in usage)

    page = (await http.get(f"/api/v1/chats/{chat_id}/messages?limit=1000", headers=headers)).json()
    assert page["summarised_upto"] == summaries[-1][1]  # the transcript marks where the summary ends
    assert sum(1 for i in page["items"] if i["role"] == "user") == TURNS  # the person still reads every turn

    # The last run's trace shows the history as it was sent: the newest summary in place of the turns it covers.
    trace = (await http.get(f"/api/v1/runs/{started.json()['run_id']}/trace", headers=headers)).json()
    (request,) = trace["requests"]
    assert request["cut"] and request["summary"] == summaries[-1][3], request
    sent = trace["history"][request["history_from"] : request["history_messages"]]
    assert "turn 0:" not in str(sent) and f"turn {TURNS - 1}: " in str(sent[-1])
    assert len(sent) == len(received[-1][1])  # as many messages as the model received


async def test_an_admin_sets_a_provider_models_context_window(http: httpx.AsyncClient, make_tenant: Any) -> None:
    """An org's own model carries the window its admin gives it (128k when unset); runs plan with it."""
    from personal_agent.governance.candidates import org_models

    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    provider = await http.post(
        "/api/v1/admin/providers",
        headers=headers,
        json={"name": "local-llm", "kind": "openai-compatible", "base_url": "http://127.0.0.1:9/v1", "trust_tier": 2},
    )
    assert provider.status_code == 201, provider.text
    models_url = f"/api/v1/admin/providers/{provider.json()['id']}/models"
    small = await http.post(models_url, headers=headers, json={"name": "small-8k", "context_window": 8192})
    plain = await http.post(models_url, headers=headers, json={"name": "plain"})
    assert small.status_code == plain.status_code == 201, small.text
    assert (small.json()["context_window"], plain.json()["context_window"]) == (8192, None)
    refused = await http.post(models_url, headers=headers, json={"name": "tiny", "context_window": 100})
    assert (refused.status_code, refused.json()["code"]) == (422, "invalid_input")
    changed = await http.patch(f"{models_url}/{small.json()['id']}", headers=headers, json={"context_window": 4096})
    assert changed.status_code == 200 and changed.json()["context_window"] == 4096, changed.text
    windows = {m.model_name: m.context_window for m in await org_models(tenant.org_id)}
    assert windows == {"small-8k": 4096, "plain": 128_000}
