"""The API function as Lambda runs it: an HTTP API v2 event through `functions/api/app.handler` and Mangum,
against the embedded Postgres and Valkey."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.auth import auth_headers
from tests.lambda_context import FakeLambdaContext, load_event

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@pytest.fixture(scope="module")
def api_handler(stack: Any) -> Handler:
    """The handler in a warm container: Mangum's event loop already holds the DB pool and the Redis client,
    so the readiness checks' 2 s budget measures the dependencies, not first imports on a busy machine."""
    from functions.api.app import handler
    from personal_agent.health.checks import readiness

    asyncio.get_event_loop().run_until_complete(readiness())
    return handler


def _call(handler: Handler, event: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    response = handler(event, FakeLambdaContext(function_name="personal-agent-api"))
    assert response["isBase64Encoded"] is False
    return response["statusCode"], response["headers"], json.loads(response["body"])


def test_healthz_event_answers_ok(api_handler: Handler) -> None:
    status, headers, body = _call(api_handler, load_event("api_healthz.json"))
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert body == {"status": "ok"}


def test_readyz_event_checks_postgres_and_redis(api_handler: Handler) -> None:
    status, _, body = _call(api_handler, load_event("api_readyz.json"))
    assert status == 200, body
    assert body["status"] == "ready"
    assert {c["name"]: c["ok"] for c in body["checks"]} == {"postgres": True, "redis": True}


def test_authenticated_route_event_sees_the_caller(api_handler: Handler, make_tenant: Any) -> None:
    tenant = make_tenant()
    event = load_event("api_me_with_jwt.json")
    event["headers"]["authorization"] = auth_headers(tenant)["Authorization"]
    status, _, body = _call(api_handler, event)
    assert status == 200, body
    assert body["subject"] == tenant.subject
    assert body["org"]["slug"] == tenant.slug


def test_unknown_route_is_a_json_404_with_a_code(api_handler: Handler) -> None:
    event = load_event("api_healthz.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/api/v1/no-such-thing"
    status, _, body = _call(api_handler, event)
    assert status == 404, body
    assert body["code"] == "not_found" and body["message"]
    assert body["request_id"] == event["requestContext"]["requestId"]  # the gateway's id: the logs' correlation id


def test_a_webhook_event_for_an_unknown_workflow_is_refused_by_the_triggers_function(stack: Any) -> None:
    from functions.triggers.app import handler

    response = handler(load_event("api_webhook.json"), FakeLambdaContext(function_name="personal-agent-triggers"))
    body = json.loads(response["body"])
    assert response["statusCode"] == 404, body
    assert body["code"] and body["request_id"]
