"""The OpenAPI document as clients and fuzzers read it: every error is the one JSON error body, and responses
carry OpenAPI links from what a route creates to the routes that use it (schemathesis follows them)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI

ERROR_SCHEMA: dict[str, Any] = {
    "title": "Error",
    "type": "object",
    "required": ["code", "message", "request_id"],
    "properties": {
        "code": {"type": "string", "description": "stable, machine-readable"},
        "message": {"type": "string", "description": "what was wrong, for a person"},
        "request_id": {"type": "string"},
        "details": {"type": "object", "additionalProperties": True},
    },
}
_ERROR_REF = {"$ref": "#/components/schemas/Error"}

# (source operation, its success status, target operation, {target parameter: runtime expression}).
LINKS: tuple[tuple[str, str, str, dict[str, str]], ...] = (
    *(
        ("create_chat", "201", target, {"chat_id": "$response.body#/id"})
        for target in ("get_chat", "rename_chat", "delete_chat", "chat_transcript", "start_run")
    ),
    ("list_chats", "200", "get_chat", {"chat_id": "$response.body#/items/0/id"}),
    *(
        ("start_run", "202", target, {"run_id": "$response.body#/run_id"})
        for target in ("get_run", "cancel_run", "run_events")
    ),
    ("get_run", "200", "chat_transcript", {"chat_id": "$response.body#/chat_id"}),
    *(
        ("create_workflow", "201", target, {"workflow_id": "$response.body#/id"})
        for target in (
            "get_workflow",
            "update_workflow",
            "delete_workflow",
            "rotate_workflow_signing_secret",
            "issue_workflow_bearer_token",
            "revoke_workflow_bearer_token",
            "workflow_runs",
            "receive_webhook",
        )
    ),
    ("create_workflow", "201", "chat_transcript", {"chat_id": "$response.body#/chat_id"}),
    ("list_workflows", "200", "get_workflow", {"workflow_id": "$response.body#/items/0/id"}),
    ("workflow_runs", "200", "get_run", {"run_id": "$response.body#/items/0/run_id"}),
    ("receive_webhook", "202", "get_run", {"run_id": "$response.body#/run_id"}),
    *(
        ("create_provider", "201", target, {"provider_id": "$response.body#/id"})
        for target in ("delete_provider", "add_provider_model")
    ),
    (
        "add_provider_model",
        "201",
        "delete_provider_model",
        {"provider_id": "$response.body#/provider_id", "model_id": "$response.body#/id"},
    ),
    ("create_key", "201", "delete_key", {"key_id": "$response.body#/id"}),
    ("set_budget", "200", "delete_budget", {"budget_id": "$response.body#/id"}),
    ("create_token", "201", "revoke_token", {"token_id": "$response.body#/id"}),
)


def _operations(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        op["operationId"]: op
        for item in schema.get("paths", {}).values()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    }


def _error_responses(operations: dict[str, dict[str, Any]]) -> None:
    """Document the error body on every operation (FastAPI's own 422 shape is not what the API sends)."""
    for op in operations.values():
        responses = op.setdefault("responses", {})
        for status in list(responses):
            if status.startswith("4"):
                responses[status]["content"] = {"application/json": {"schema": _ERROR_REF}}
        responses.setdefault("4XX", {"description": "an error the caller can act on"})
        responses["4XX"]["content"] = {"application/json": {"schema": _ERROR_REF}}


def _links(operations: dict[str, dict[str, Any]]) -> None:
    for source, status, target, parameters in LINKS:
        if source not in operations or target not in operations:
            continue  # an app without that route (the webhook-only app, or the API without the stream relay)
        response = operations[source].get("responses", {}).get(status)
        if response is None:
            continue
        name = "".join(part.capitalize() for part in target.split("_"))
        response.setdefault("links", {})[name] = {"operationId": target, "parameters": dict(parameters)}


def _custom_events(schemas: dict[str, Any]) -> None:
    """The event streams' CUSTOM values (events/custom.py), so the web chat's types are generated from them too."""
    from personal_agent.events.custom import openapi_components

    for name, component in openapi_components().items():
        if name in schemas and schemas[name] != component:
            raise RuntimeError(f"the event model {name} has the name of a route's schema: rename one of them")
        schemas[name] = component


def postprocess(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the error body, the CUSTOM events' values and the links to FastAPI's generated document (in place;
    returned for chaining)."""
    schema.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    _custom_events(schema["components"]["schemas"])
    operations = _operations(schema)
    _error_responses(operations)
    _links(operations)
    schemas = schema["components"]["schemas"]
    for name in ("HTTPValidationError", "ValidationError"):  # FastAPI's, now unreferenced
        if f'"#/components/schemas/{name}"' not in json.dumps({k: v for k, v in schema.items() if k != "components"}):
            schemas.pop(name, None)
    return schema


def install_openapi(app: FastAPI) -> None:
    """Make `app.openapi()` (and `/openapi.json`) return the post-processed document, built once."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = postprocess(generate())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
