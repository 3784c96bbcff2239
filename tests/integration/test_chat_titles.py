"""A new chat is titled when its first run succeeds: by the routing model (its classification names the request),
else offline from the request's first words; a title a person gave and a later run leave it be."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.scripted import scripted_model
from tests.sse import read_events

QUESTION = "how often must the zephyr valve be recalibrated by a technician?"


@pytest.fixture
def naming_router() -> Iterator[str]:
    def classify(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = {"intent": "a question", "acts_on_world": False, "confidence": 0.9, "title": '"Zephyr valve upkeep."'}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    register_model("router:namer", lambda: FunctionModel(classify, model_name="namer"), tags=("cheap",), quality=2)
    yield "router:namer"
    unregister_model("router:namer")


async def answers(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    yield "Every ninety days."


async def _turn(
    http: httpx.AsyncClient, headers: dict[str, str], chat_id: str, model: str, message: str = QUESTION
) -> str:
    """Run one inline turn to its end; the chat's title after it."""
    body = {"message": message, "model": model, "mode": "inline"}
    started = await http.post(f"/api/v1/chats/{chat_id}/runs", json=body, headers=headers)
    assert started.status_code == 202, started.text
    await read_events(http, started.json()["events_url"], headers)
    listed = (await http.get("/api/v1/chats", headers=headers)).json()["items"]
    return str(next(c["title"] for c in listed if c["id"] == chat_id))


async def _chat(http: httpx.AsyncClient, headers: dict[str, str], title: str | None = None) -> str:
    made = await http.post("/api/v1/chats", json={"title": title} if title else {}, headers=headers)
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


async def test_the_routing_model_names_a_new_chat(
    http: httpx.AsyncClient, make_tenant: Any, naming_router: str
) -> None:
    headers = auth_headers(make_tenant(roles=("org-admin",)), roles=("org-admin",))
    routed = await http.put("/api/v1/admin/settings", headers=headers, json={"routing_model": naming_router})
    assert routed.status_code == 200, routed.text
    with scripted_model(answers) as (model, _):
        chat_id = await _chat(http, headers)
        assert await _turn(http, headers, chat_id, model) == "Zephyr valve upkeep"
        named = await _chat(http, headers, "Maintenance questions")
        assert await _turn(http, headers, named, model) == "Maintenance questions"  # a person's title stays


async def test_without_a_routing_model_the_first_words_name_it_once(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(answers) as (model, _):
        chat_id = await _chat(http, headers)
        assert await _turn(http, headers, chat_id, model) == "How often must the zephyr valve be…"
        assert await _turn(http, headers, chat_id, model, "and who may do it?") == "How often must the zephyr valve be…"
