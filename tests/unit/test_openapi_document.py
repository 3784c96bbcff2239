"""The OpenAPI document says what the API does: the one error body, response models, and links for clients
(and schemathesis' stateful phase) to follow from what a route creates to the routes that use it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from personal_agent.api.openapi import LINKS


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    from personal_agent.local.dev_app import create_dev_app

    return create_dev_app().openapi()


def _operations(document: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        op["operationId"]: (path, op)
        for path, item in document["paths"].items()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    }


def test_every_error_response_is_the_error_body(document: dict[str, Any]) -> None:
    error = {"$ref": "#/components/schemas/Error"}
    assert set(document["components"]["schemas"]["Error"]["required"]) == {"code", "message", "request_id"}
    for operation_id, (_, op) in _operations(document).items():
        errors = {status: r for status, r in op["responses"].items() if status.startswith("4")}
        assert "4XX" in errors, operation_id
        for status, response in errors.items():
            assert response["content"]["application/json"]["schema"] == error, (operation_id, status)
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_links_lead_from_what_a_route_creates_to_the_routes_that_use_it(document: dict[str, Any]) -> None:
    operations = _operations(document)
    linked = set()
    for source, status, target, _parameters in LINKS:
        if target not in operations:
            continue
        link = operations[source][1]["responses"][status]["links"]
        (found,) = [v for v in link.values() if v["operationId"] == target]
        path, target_op = operations[target]
        names = {p["name"] for p in target_op.get("parameters", []) if p["in"] == "path"}
        assert set(found["parameters"]) <= names == set(re.findall(r"{(\w+)}", path)), (source, target)
        linked.add((source, target))
    for pair in [
        ("create_chat", "start_run"),
        ("start_run", "get_run"),
        ("create_workflow", "get_workflow"),
        ("create_provider", "add_provider_model"),
        ("create_key", "delete_key"),
    ]:
        assert pair in linked


MINE = {"chats", "runs", "workflows", "webhooks", "approvals", "models", "config"}


def test_the_json_routes_declare_their_response_model(document: dict[str, Any]) -> None:
    loose = []
    for operation_id, (_, op) in _operations(document).items():
        if not MINE & set(op.get("tags", [])):
            continue
        for status, response in op["responses"].items():
            schema = response.get("content", {}).get("application/json", {}).get("schema")
            if status.startswith("2") and schema is not None and "$ref" not in schema:
                loose.append(operation_id)
    assert loose == []
