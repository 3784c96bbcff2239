"""A tool call with bad arguments goes back to the model as a retry prompt, and the run goes on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from tests.auth import auth_headers
from tests.runs import start_run
from tests.scripted import scripted_model
from tests.sse import read_events


async def test_a_refused_calculation_is_a_retry_the_model_fixes(http: httpx.AsyncClient, make_tenant: Any) -> None:
    retries: list[str] = []

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        last = messages[-1]
        parts = last.parts if isinstance(last, ModelRequest) else []
        told = [p for p in parts if isinstance(p, ToolReturnPart) and p.outcome == "retried"]
        retries.extend(str(p.content) for p in told)
        if len(messages) == 1:
            yield {0: DeltaToolCall(name="calculate", json_args='{"expression": "(9**99)**99"}', tool_call_id="c1")}
        elif told:
            yield {0: DeltaToolCall(name="calculate", json_args='{"expression": "9*99"}', tool_call_id="c2")}
        else:
            yield "It is 891."

    headers = auth_headers(make_tenant())
    with scripted_model(script) as (model, _):
        run = await start_run(http, headers, model, message="what is 9 times 99?")
        frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED"
    assert retries == ["the result is too large"]
    results = [f.data["content"] for f in frames if f.type == "TOOL_CALL_RESULT"]
    assert results[-1] == "891"
    status = (await http.get(f"/api/v1/runs/{run['run_id']}", headers=headers)).json()
    assert status["status"] == "succeeded"
