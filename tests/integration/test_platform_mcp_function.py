"""The platform MCP function as Lambda runs it on AWS: HTTP API v2 events to `/mcp` through
`functions/platform_mcp/app.handler` and Mangum (stateless, JSON responses), against the embedded stack."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from tests.auth import auth_headers
from tests.lambda_context import FakeLambdaContext, load_event
from tests.scripted import scripted_model

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
PROTOCOL = "2025-06-18"


@pytest.fixture(scope="module")
def mcp_handler(stack: Any) -> Handler:
    from functions.platform_mcp.app import handler

    return handler


def _post(handler: Handler, token: str | None, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    event = load_event("platform_mcp_post.json")
    if token is None:
        del event["headers"]["authorization"]
    else:
        event["headers"]["authorization"] = f"Bearer {token}"
    event["body"] = json.dumps(body)
    response = handler(event, FakeLambdaContext(function_name="personal-agent-platform-mcp"))
    text = response["body"]
    return response["statusCode"], response["headers"], json.loads(text) if text else None


def _rpc(handler: Handler, token: str, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    status, headers, body = _post(
        handler, token, {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    )
    assert status == 200, body
    assert headers["content-type"].startswith("application/json")  # one buffered JSON answer, no SSE stream
    assert body["id"] == request_id and "error" not in body, body
    result: dict[str, Any] = body["result"]
    return result


def _pat(tenant: Any) -> str:
    """A personal access token made through the API function, as a user of the web chat would."""
    from functions.api.app import handler as api

    event = load_event("api_me_with_jwt.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/api/v1/me/tokens"
    event["requestContext"]["http"]["method"] = "POST"
    event["headers"]["authorization"] = auth_headers(tenant)["Authorization"]
    event["headers"]["content-type"] = "application/json"
    event["body"] = json.dumps({"name": "claude-desktop"})
    response = api(event, FakeLambdaContext(function_name="personal-agent-api"))
    assert response["statusCode"] == 201, response["body"]
    return str(json.loads(response["body"])["token"])


async def _answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    yield "The answer "
    yield "is 42."


def _wait_finished(live_url: str, run_id: str, token: str) -> str:
    """Follow the run's AG-UI stream until it ends (or a minute passed); the last event's type."""
    last, deadline = "", time.monotonic() + 60
    with (
        httpx.Client(base_url=live_url, timeout=30) as client,
        client.stream("GET", f"/api/v1/runs/{run_id}/events", headers={"Authorization": f"Bearer {token}"}) as stream,
    ):
        assert stream.status_code == 200
        for line in stream.iter_lines():
            assert time.monotonic() < deadline, f"the run did not finish; last event {last!r}"
            if line.startswith("data:"):
                last = json.loads(line[5:])["type"]
                if last in ("RUN_FINISHED", "RUN_ERROR"):
                    break
    return last


def test_initialize_list_and_start_a_run_with_a_pat(mcp_handler: Handler, make_tenant: Any, live_url: str) -> None:
    token = _pat(make_tenant())
    hello = _rpc(
        mcp_handler,
        token,
        1,
        "initialize",
        {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "lambda-test", "version": "1"}},
    )
    assert hello["serverInfo"]["name"] == "personal-agent" and "tools" in hello["capabilities"]

    listed = _rpc(mcp_handler, token, 2, "tools/list", {})
    assert {t["name"] for t in listed["tools"]} >= {"start_run", "get_run", "list_chats"}

    with scripted_model(_answer) as (model_id, _):
        called = _rpc(
            mcp_handler,
            token,
            3,
            "tools/call",
            # Durable: on AWS nothing of a run lives in this function's container once it has answered (an inline
            # run would be a Lambda invoke there; locally it would be a task of Mangum's finished request).
            {
                "name": "start_run",
                "arguments": {"message": "What is the answer?", "model": model_id, "mode": "durable"},
            },
        )
        assert called["isError"] is False, called
        run = called["structuredContent"]
        assert run["model"] == model_id and run["mode"] == "durable"
        assert _wait_finished(live_url, run["run_id"], token) == "RUN_FINISHED"

    got = _rpc(mcp_handler, token, 4, "tools/call", {"name": "get_run", "arguments": {"run_id": run["run_id"]}})
    assert got["isError"] is False, got
    assert (got["structuredContent"]["status"], got["structuredContent"]["answer"]) == (
        "succeeded",
        "The answer is 42.",
    )
    chats = _rpc(mcp_handler, token, 5, "tools/call", {"name": "list_chats", "arguments": {}})
    assert [c["id"] for c in chats["structuredContent"]["chats"]] == [run["chat_id"]]


def test_without_a_token_the_function_refuses_before_any_mcp(mcp_handler: Handler) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    status, _, body = _post(mcp_handler, None, initialize)
    assert (status, body["code"]) == (401, "missing_token")
    assert body["request_id"] == load_event("platform_mcp_post.json")["requestContext"]["requestId"]
    status, _, body = _post(mcp_handler, "pa_pat_" + "x" * 43, initialize)
    assert (status, body["code"]) == (401, "unknown_token")


def test_the_function_serves_mcp_alone(mcp_handler: Handler, make_tenant: Any) -> None:
    """The rest of the API stays the API function's: this function answers nothing but `/mcp`."""
    event = load_event("api_me_with_jwt.json")
    event["headers"]["authorization"] = auth_headers(make_tenant())["Authorization"]
    response = mcp_handler(event, FakeLambdaContext(function_name="personal-agent-platform-mcp"))
    assert response["statusCode"] == 404 and json.loads(response["body"])["code"] == "not_found"


def test_a_warm_container_answers_again(mcp_handler: Handler, make_tenant: Any) -> None:
    """A fresh MCP transport per request: the second request on the same container works like the first."""
    token = _pat(make_tenant())
    for request_id in (1, 2):
        assert {t["name"] for t in _rpc(mcp_handler, token, request_id, "tools/list", {})["tools"]} >= {"start_run"}
