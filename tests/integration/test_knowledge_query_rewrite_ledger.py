"""Query rewriting is a model request like any other (issue 36): with `PA_KNOWLEDGE_QUERY_REWRITE` on, the router's
rewrite of a `search_knowledge` follow-up is on the usage ledger (its own request index, tokens, the router's price),
and it is reserved against the org's budget first: an org whose cap is spent by the time the search runs gets no
rewrite (the router is not asked, nothing is billed), and the run then ends `budget_exceeded` as any run would."""

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
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.engine.search_rewrite import REWRITE_INDEX_BASE
from personal_agent.models.catalog import register_model, unregister_model
from tests.auth import auth_headers
from tests.runs import start_run
from tests.sse import read_events

ROUTER_IN, ROUTER_OUT = 3.0, 15.0  # USD per million tokens


@pytest.fixture
def rewriting() -> Iterator[None]:
    from personal_agent.settings import get_settings

    os.environ["PA_KNOWLEDGE_QUERY_REWRITE"] = "1"
    get_settings.cache_clear()
    yield
    os.environ.pop("PA_KNOWLEDGE_QUERY_REWRITE", None)
    get_settings.cache_clear()


def _router(model_id: str, rewrites: list[str]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tool = info.output_tools[0]
        if "query" not in tool.parameters_json_schema.get("properties", {}):  # the routing classification
            decision = {"intent": "question", "acts_on_world": False, "confidence": 0.9, "title": "Falcon"}
            return ModelResponse(parts=[ToolCallPart(tool.name, json.dumps(decision))])
        rewrites.append("asked")
        return ModelResponse(parts=[ToolCallPart(tool.name, json.dumps({"query": "Project Falcon launch date"}))])

    return FunctionModel(answer, model_name=model_id)  # the model name the router's prices apply to


def _searcher(model_id: str, searched: list[Any]) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        results = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        if not results:
            args = json.dumps({"query": "and when does it launch?", "k": 1})
            yield {0: DeltaToolCall(name="search_knowledge", json_args=args, tool_call_id="kb_1")}
            return
        searched.append(results[0].content)
        yield "done"

    return FunctionModel(stream_function=stream, model_name=model_id)


async def _run(
    http: httpx.AsyncClient, headers: dict[str, str], main_price: float | None
) -> tuple[dict[str, Any], list[str], list[Any]]:
    """One run whose model searches a follow-up; the run's last event, the router's rewrites, what was searched."""
    rewrites: list[str] = []
    searched: list[Any] = []
    main, router = f"test:{uuid.uuid4().hex[:8]}", f"test:{uuid.uuid4().hex[:8]}"
    register_model(
        main, lambda: _searcher(main, searched), tier=2, quality=50, input_price=main_price, output_price=main_price
    )
    register_model(
        router, lambda: _router(router, rewrites), tier=2, tags=("cheap",), quality=1, input_price=ROUTER_IN,
        output_price=ROUTER_OUT,
    )  # fmt: skip
    try:
        started = await start_run(http, headers, main, message="Tell me about project Falcon. When does it launch?")
        events = await read_events(http, f"/api/v1/runs/{started['run_id']}/events", headers)
    finally:
        unregister_model(main)
        unregister_model(router)
    last = events[-1].data
    return {"run_id": started["run_id"], "router": router, **last}, rewrites, searched


def _ledger(admin_url: str, run_id: str) -> dict[int, dict[str, Any]]:
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute(
            "SELECT request_index, model_name, input_tokens, output_tokens, cost_usd FROM usage_records"
            " WHERE run_id = %s",
            [run_id],
        ).fetchall()
        held = conn.execute("SELECT count(*) FROM budget_reservations WHERE run_id = %s", [run_id]).fetchone()
    assert held == (0,), "a reservation was left held"
    return {r[0]: {"model": r[1], "input": r[2], "output": r[3], "cost": r[4]} for r in rows}


async def test_the_rewrite_is_on_the_ledger_at_the_routers_price(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, rewriting: None
) -> None:
    tenant = make_tenant()
    run, rewrites, searched = await _run(http, auth_headers(tenant), main_price=None)
    assert run["type"] == "RUN_FINISHED" and rewrites == ["asked"] and searched, run
    ledger = _ledger(admin_url, run["run_id"])
    row = ledger[REWRITE_INDEX_BASE]  # the run's first tool call
    assert row["model"] == run["router"] and row["input"] > 0 and row["output"] > 0
    expected = (Decimal(str(ROUTER_IN)) * row["input"] + Decimal(str(ROUTER_OUT)) * row["output"]) / 1_000_000
    assert row["cost"] == expected > 0
    assert ledger[-1]["model"] == run["router"]  # the routing classification, a row of its own
    assert sorted(i for i in ledger if i >= 0) == [0, 1]  # the main model's two requests


async def test_a_spent_org_budget_gets_no_rewrite(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, rewriting: None
) -> None:
    tenant = make_tenant(("org-admin",))
    headers = auth_headers(tenant, ("org-admin",))
    cap = {"scope": "org", "monthly_usd": "0.001"}
    assert (await http.put("/api/v1/admin/budgets", json=cap, headers=headers)).status_code == 200
    # The model's first answer (the search call) costs more than the whole cap: by the time the search runs, the
    # org's budget is spent.
    run, rewrites, _ = await _run(http, headers, main_price=1000.0)
    assert rewrites == [], "the router was asked to rewrite over a spent budget"
    ledger = _ledger(admin_url, run["run_id"])
    assert REWRITE_INDEX_BASE not in ledger and ledger[0]["cost"] > Decimal("0.001")
    assert run["type"] == "RUN_ERROR" and run["code"] == "budget_exceeded", run
