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


def _ref(schema: dict[str, Any]) -> str | None:
    """The component a body schema names: itself (`$ref`) or, for a list, its items."""
    target = schema.get("items", {}) if schema.get("type") == "array" else schema
    return target.get("$ref")


def test_every_success_response_has_a_schema(document: dict[str, Any]) -> None:
    """Every 2xx but 204 has a body schema: JSON bodies name a component (or a list of one) with its properties,
    never a free-form object; CSV is a string and an event stream describes its events. A 204 has no body."""
    schemas = document["components"]["schemas"]
    loose: list[tuple[str, str, object]] = []
    for operation_id, (_, op) in _operations(document).items():
        for status, response in op["responses"].items():
            if not status.startswith("2"):
                continue
            content = response.get("content", {})
            if status == "204":
                assert content == {}, operation_id
                continue
            if not content:
                loose.append((operation_id, status, "no body"))
            for media_type, body in content.items():
                schema = body.get("schema") or {}
                if media_type == "application/json":
                    ref = _ref(schema)
                    named = schemas.get(ref.rsplit("/", 1)[-1], {}) if ref else {}
                    if not named.get("properties") or named.get("additionalProperties") is True:
                        loose.append((operation_id, status, schema))
                elif media_type == "text/event-stream":  # the schema is each event's (OpenAPI 3.2's itemSchema)
                    if schema.get("required") != ["data"] or schema["properties"]["data"]["type"] != "string":
                        loose.append((operation_id, status, media_type))
                elif schema != {"type": "string"}:
                    loose.append((operation_id, status, media_type))
    assert loose == []


def test_non_json_routes_declare_only_their_media_type(document: dict[str, Any]) -> None:
    operations = _operations(document)
    for operation_id, media_type in [
        ("export_usage", "text/csv"),
        ("run_events", "text/event-stream"),
        ("feed", "text/event-stream"),
        ("agui_run", "text/event-stream"),
    ]:
        assert set(operations[operation_id][1]["responses"]["200"]["content"]) == {media_type}, operation_id


def test_component_names_are_stable(document: dict[str, Any]) -> None:
    """Two models of one name come out as `Name-Input`/`Name-Output` (or module-qualified): generated types
    would then be renamed by an unrelated change."""
    names = list(document["components"]["schemas"])
    assert [n for n in names if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", n)] == []
