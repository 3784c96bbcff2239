"""Knowledge feeds the classification gate: a run's `search_knowledge` returns passages with citations, and a
restricted document's chunks, which a run on a regulated-tier (1) model may not receive, are left out of its
result (which says so) instead of failing the run: the passage never reaches the model, and the search still
works for everyone (issue 28, item 7)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.knowledge import make_pdf, upload_and_wait
from tests.runs import start_run
from tests.sse import read_events


@contextmanager
def searching_model(seen: list[Any], tier: int = 1) -> Iterator[str]:
    """A scripted model of a provider of `tier` (1: regulated): searches the knowledge base, then answers with what
    it saw."""
    model_id = f"test:{uuid.uuid4().hex[:8]}"

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        results = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        if not results:
            args = json.dumps({"query": "launch date of project Falcon"})
            yield {0: DeltaToolCall(name="search_knowledge", json_args=args, tool_call_id="kb_1")}
            return
        content: Any = results[0].content
        seen.append(content)
        cited = [p["citation"] for p in content if "citation" in p]
        yield "Per " + (cited[0] if cited else "nothing I may read")

    register_model(model_id, lambda: FunctionModel(stream_function=stream, model_name="regulated"), tier=tier)
    try:
        yield model_id
    finally:
        unregister_model(model_id)


async def _run(http: httpx.AsyncClient, headers: dict[str, str], model: str) -> tuple[dict[str, Any], list[Any]]:
    started = await start_run(http, headers, model, message="when does Falcon launch?")
    frames = await read_events(http, f"/api/v1/runs/{started['run_id']}/events", headers)
    run = (await http.get(f"/api/v1/runs/{started['run_id']}", headers=headers)).json()
    return run, frames


async def test_a_standard_passage_comes_back_with_its_citation(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    text = "Project Falcon launch date: the ninth of June, announced at the all-hands."
    doc = await upload_and_wait(http, headers, tenant, "falcon.pdf", "application/pdf", make_pdf([text]))
    seen: list[Any] = []
    with searching_model(seen) as model:
        run, frames = await _run(http, headers, model)
    assert run["status"] == "succeeded", run
    passage = seen[0][0]
    assert passage["document"] == "falcon.pdf" and passage["page"] == 1 and passage["document_id"] == doc["id"]
    assert passage["chunk_id"] in passage["citation"] and "ninth of June" in passage["text"]
    assert any(f.type == "TEXT_MESSAGE_CONTENT" and "falcon.pdf, p. 1" in f.data["delta"] for f in frames)


async def test_a_restricted_passage_is_left_out_for_a_lower_tier_model_and_the_run_goes_on(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))  # only an org admin classifies an org document above default
    text = "Project Falcon launch date: the ninth of June (board only)."
    doc = await upload_and_wait(
        http, headers, tenant, "falcon-board.pdf", "application/pdf", make_pdf([text]), classification="restricted"
    )
    assert doc["status"] == "ready" and doc["classification"] == "restricted"
    seen: list[Any] = []
    with searching_model(seen) as model:
        run, frames = await _run(http, headers, model)
    assert run["status"] == "succeeded", run
    assert seen == [[{"left_out": 1, "note": seen[0][0]["note"]}]] and "higher-tier model" in seen[0][0]["note"]
    assert not any("ninth of June" in json.dumps(f.data) for f in frames)  # the passage never reached the model


async def test_a_restricted_passage_keeps_its_chat_from_a_lower_tier_model_afterwards(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    """Labels follow the data (issue 28, item 2): a restricted passage retrieved into a `standard` chat by a tier-2
    model raises the chat's content tier, so the chat's next turn is refused for a tier-0 model (before: the
    passage, in the chat's history, went to it), and its classification cannot go below it."""
    tenant = make_tenant(roles=("org-admin",))
    headers = auth_headers(tenant, roles=("org-admin",))
    text = "Project Falcon launch date: the ninth of June (board only)."
    await upload_and_wait(
        http, headers, tenant, "falcon-board.pdf", "application/pdf", make_pdf([text]), classification="restricted"
    )
    seen: list[Any] = []
    with searching_model(seen, tier=2) as internal:  # alone: no lower-tier fallback in its chain
        started = await start_run(http, headers, internal, message="when does Falcon launch?")
        await read_events(http, started["events_url"], headers)
    assert "ninth of June" in json.dumps(seen)  # the tier-2 model may read it
    chat = started["chat_id"]
    with searching_model([], tier=0) as unregulated:
        body = {"message": "and the budget?", "model": unregulated, "mode": "inline"}
        refused = await http.post(f"/api/v1/chats/{chat}/runs", json=body, headers=headers)
        patched = await http.patch(f"/api/v1/chats/{chat}", json={"classification": "confidential"}, headers=headers)
    assert refused.status_code == 403 and refused.json()["code"] == "classification_blocked"
    assert patched.status_code == 409 and patched.json()["code"] == "classification_below_content"
