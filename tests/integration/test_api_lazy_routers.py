"""The API Lambda's app imports each router when a request first needs it (`fastpaths.lazy_routers`): every request
must still get exactly the answer the eagerly built app gives (same status, body, redirect), including unknown
paths, a method no loaded route takes and a trailing slash, and the OpenAPI document must be the same."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from fastapi import FastAPI

from personal_agent.api.app import create_app
from personal_agent.api.router_groups import GROUPS
from personal_agent.fastpaths.lazy_routers import LazyRouters
from tests.auth import auth_headers


def _loaded(app: FastAPI) -> set[str]:
    loader: LazyRouters = app.state.lazy_routers
    return {group.module for group in loader.loaded}


async def _answer(app: FastAPI, method: str, path: str, headers: dict[str, str], body: Any = None) -> tuple[Any, ...]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        response = await http.request(method, path, headers=headers, json=body)
    payload = response.json() if response.headers.get("content-type") == "application/json" else response.text
    if isinstance(payload, dict):
        payload.pop("request_id", None)
    return response.status_code, payload, response.headers.get("location")


def test_every_route_of_a_group_lies_under_its_prefixes() -> None:
    for group in GROUPS:
        for router in group.routers():
            for route in router.routes:
                path = getattr(route, "path", "")
                assert group.covers(path), (group.module, path)


def test_the_lazy_app_documents_the_same_api() -> None:
    lazy = create_app(lazy_routers=True)
    assert _loaded(lazy) == set()
    assert lazy.openapi() == create_app().openapi()
    assert _loaded(lazy) == {group.module for group in GROUPS}


async def test_a_cold_lazy_app_answers_every_request_as_the_eager_app(stack: object, make_tenant: Any) -> None:
    user = make_tenant()
    admin = make_tenant(roles=("user", "admin"))
    admin_headers = auth_headers(admin, roles=("user", "admin"))
    some_id = str(uuid.uuid4())
    everything = {group.module for group in GROUPS}
    cases: list[tuple[str, str, Any, dict[str, str], int, set[str]]] = [
        # method, path, body, headers, the answer's status, the groups a cold app imports to give it
        ("GET", "/api/v1/chats", None, auth_headers(user), 200, {"chats"}),
        ("POST", "/api/v1/chats", {"title": "lazy"}, auth_headers(user), 201, {"chats"}),
        ("GET", f"/api/v1/runs/{some_id}", None, auth_headers(user), 404, {"runs"}),
        ("GET", f"/api/v1/chats/{some_id}/attachments", None, auth_headers(user), 405, everything),  # POST only
        ("GET", "/api/v1/me/memories", None, auth_headers(user), 200, {"memories"}),
        ("GET", "/api/v1/me", None, auth_headers(user), 200, set()),
        ("GET", "/api/v1/admin/mcp-servers", None, admin_headers, 200, {"governance", "admin_console", "mcp_servers"}),
        (
            "GET",
            "/api/v1/admin/mcp-servers",
            None,
            auth_headers(user),
            403,
            {"governance", "admin_console", "mcp_servers"},
        ),
        (
            "GET",
            f"/api/v1/workflows/{some_id}/outputs",
            None,
            auth_headers(user),
            404,
            {"workflows", "workflow_outputs"},
        ),
        ("GET", "/api/v1/knowledge/documents", None, auth_headers(user), 200, {"knowledge"}),
        ("DELETE", "/api/v1/models", None, auth_headers(user), 405, everything),
        ("GET", "/api/v1/no-such-thing", None, auth_headers(user), 404, everything),
        ("GET", "/api/v1/chats/", None, auth_headers(user), 307, everything),  # the trailing-slash redirect
        ("GET", "/healthz", None, {}, 200, set()),
    ]
    eager = create_app()
    for method, path, body, headers, status, loads in cases:
        lazy = create_app(lazy_routers=True)  # cold, every time
        expected = await _answer(eager, method, path, headers, body)
        got = await _answer(lazy, method, path, headers, body)
        if method == "POST":  # a new chat each time: compare what is not its identity
            assert (got[0], set(got[1])) == (expected[0], set(expected[1])), (path, got, expected)
        else:
            assert got == expected, (method, path)
        assert got[0] == status, (method, path, got)
        assert _loaded(lazy) == loads, (method, path, _loaded(lazy))
