"""Query rewriting in a run (issue 36, item 2): with `PA_KNOWLEDGE_QUERY_REWRITE` on, `search_knowledge` hands the
model's follow-up query and the user's turns to the run's cheap router model, and searches what it answers. The
main model and the router are scripted FunctionModels (the router also answers the routing classification)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.knowledge import make_pdf, upload_and_wait
from tests.runs import start_run
from tests.sse import read_events

FALCON = "Project Falcon launch date: the ninth of June, announced at the all-hands."
DISTRACTOR = "When does it launch? It launches when the countdown ends, says the Atlas rocket FAQ."


@pytest.fixture
def rewriting() -> Iterator[None]:
    from personal_agent.settings import get_settings

    os.environ["PA_KNOWLEDGE_QUERY_REWRITE"] = "1"
    get_settings.cache_clear()
    yield
    os.environ.pop("PA_KNOWLEDGE_QUERY_REWRITE", None)
    get_settings.cache_clear()


def _router(prompts: list[str]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tool = info.output_tools[0]
        if "query" not in tool.parameters_json_schema.get("properties", {}):  # the routing classification
            decision = {"intent": "question", "acts_on_world": False, "confidence": 0.9, "title": "Falcon"}
            return ModelResponse(parts=[ToolCallPart(tool.name, json.dumps(decision))])
        prompt = [
            p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)
        ]
        prompts.append(str(prompt[-1]))
        return ModelResponse(parts=[ToolCallPart(tool.name, json.dumps({"query": "Project Falcon launch date"}))])

    return FunctionModel(answer, model_name="router")


def _searcher(seen: list[Any]) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        results = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        if not results:
            args = json.dumps({"query": "and when does it launch?", "k": 1})
            yield {0: DeltaToolCall(name="search_knowledge", json_args=args, tool_call_id="kb_1")}
            return
        seen.append(results[0].content)
        yield "done"

    return FunctionModel(stream_function=stream, model_name="searcher")


async def test_a_follow_up_is_searched_as_the_router_rewrote_it(
    http: httpx.AsyncClient, make_tenant: Any, rewriting: None
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    falcon = await upload_and_wait(http, headers, tenant, "falcon.pdf", "application/pdf", make_pdf([FALCON]))
    await upload_and_wait(http, headers, tenant, "atlas.pdf", "application/pdf", make_pdf([DISTRACTOR]))
    as_asked = await http.get("/api/v1/knowledge/search", headers=headers, params={"q": "and when does it launch?"})
    assert as_asked.json()["items"][0]["filename"] == "atlas.pdf"  # what the follow-up alone finds

    prompts: list[str] = []
    seen: list[Any] = []
    main, router = f"test:{uuid.uuid4().hex[:8]}", f"test:{uuid.uuid4().hex[:8]}"
    register_model(main, lambda: _searcher(seen), tier=2, quality=50)
    register_model(router, lambda: _router(prompts), tier=2, tags=("cheap",), quality=1)
    try:
        started = await start_run(http, headers, main, message="Tell me about project Falcon. When does it launch?")
        await read_events(http, f"/api/v1/runs/{started['run_id']}/events", headers)
    finally:
        unregister_model(main)
        unregister_model(router)
    assert prompts and "- Tell me about project Falcon. When does it launch?" in prompts[0]
    assert prompts[0].endswith("Last message: and when does it launch?")
    assert seen[0][0]["document_id"] == falcon["id"] and "ninth of June" in seen[0][0]["text"]


@pytest.mark.parametrize(("classification", "router_tier"), [("confidential", 0), ("restricted", 1)])
async def test_a_router_below_the_conversations_tier_is_never_asked_and_the_follow_up_is_searched_as_asked(
    http: httpx.AsyncClient, make_tenant: Any, rewriting: None, classification: str, router_tier: int
) -> None:
    """The org's floor at 0, so the conversation's classification alone sets the tier: a cheap router below it
    may not read the conversation, neither to route nor to rewrite; the search runs the model's own query."""
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    floor = await http.put("/api/v1/admin/settings", headers=headers, json={"tier_floor": 0})
    assert floor.status_code == 200, floor.text
    await upload_and_wait(http, headers, tenant, "falcon.pdf", "application/pdf", make_pdf([FALCON]))
    atlas = await upload_and_wait(http, headers, tenant, "atlas.pdf", "application/pdf", make_pdf([DISTRACTOR]))
    chat = await http.post("/api/v1/chats", json={"classification": classification}, headers=headers)
    assert chat.status_code == 201, chat.text

    prompts: list[str] = []
    seen: list[Any] = []
    router_built: list[str] = []

    def router() -> FunctionModel:
        router_built.append("router")
        return _router(prompts)

    main, cheap = f"test:{uuid.uuid4().hex[:8]}", f"test:{uuid.uuid4().hex[:8]}"
    register_model(main, lambda: _searcher(seen), tier=2, quality=50)
    register_model(cheap, router, tier=router_tier, tags=("cheap",), quality=1)
    try:
        started = await start_run(
            http, headers, main, message="Tell me about project Falcon. When does it launch?", chat_id=chat.json()["id"]
        )
        frames = await read_events(http, f"/api/v1/runs/{started['run_id']}/events", headers)
    finally:
        unregister_model(main)
        unregister_model(cheap)
    assert router_built == [] and prompts == []  # not built: neither the routing classification nor the rewrite
    assert seen, frames  # the search ran, with the follow-up as the model wrote it: the distractor it finds alone
    assert seen[0][0]["document_id"] == atlas["id"]
