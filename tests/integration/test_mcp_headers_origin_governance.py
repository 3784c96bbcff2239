"""Write-only MCP headers stay with the origin they were entered for (issue 28, item 5): pointing a server at
another origin drops them (the new server never receives the secret), a change within the origin keeps them, new
headers sent with the move go to the new origin, and headers whose row was moved behind the API's back do not
open (the origin is recorded with them and is part of their encryption context)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from personal_agent.local.demo_mcp import DemoLog
from tests import db_state
from tests.auth import auth_headers
from tests.live_server import LiveServer
from tests.mcp_demo import ADMIN, SECRET, register, serve_demo

SERVERS = "/api/v1/admin/mcp-servers"


@pytest.fixture
def other() -> Iterator[tuple[LiveServer, DemoLog]]:
    """A second MCP server on loopback: the one an admin points the registration at afterwards."""
    with serve_demo() as served:
        yield served


def _secrets(log: DemoLog) -> list[str | None]:
    return [h.get("authorization") for h in log.headers]


async def _discover(http: httpx.AsyncClient, headers: dict[str, str], server_id: str) -> dict[str, Any]:
    found = await http.get(f"{SERVERS}/{server_id}/tools", headers=headers)
    assert found.status_code == 200, found.text
    return dict(found.json())


async def test_moving_a_server_to_another_origin_drops_its_headers(
    http: httpx.AsyncClient, make_tenant: Any, demo: tuple[LiveServer, DemoLog], other: tuple[LiveServer, DemoLog]
) -> None:
    (first, first_log), (second, second_log) = demo, other
    headers = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    created = await register(http, headers, first.url)
    assert (await _discover(http, headers, created["id"]))["reachable"] and SECRET in _secrets(first_log)

    same_origin = await http.patch(f"{SERVERS}/{created['id']}", headers=headers, json={"url": f"{first.url}/mcp?v=2"})
    assert same_origin.status_code == 200 and same_origin.json()["header_names"] == ["Authorization"]
    first_log.headers.clear()
    assert (await _discover(http, headers, created["id"]))["reachable"]
    assert SECRET in _secrets(first_log)  # kept within its origin

    moved = await http.patch(f"{SERVERS}/{created['id']}", headers=headers, json={"url": f"{second.url}/mcp"})
    assert moved.status_code == 200, moved.text
    assert (moved.json()["header_names"], moved.json()["has_headers"]) == ([], False)
    assert (await _discover(http, headers, created["id"]))["reachable"]
    assert second_log.headers and SECRET not in _secrets(second_log)  # connected, without the secret

    back = await http.patch(f"{SERVERS}/{created['id']}", headers=headers, json={"url": f"{first.url}/mcp"})
    first_log.headers.clear()
    assert back.json()["has_headers"] is False and (await _discover(http, headers, created["id"]))["reachable"]
    assert SECRET not in _secrets(first_log)  # dropped, not parked: moving back does not bring them back

    # Headers sent with a move are entered for the new origin, and go there.
    moved = await http.patch(
        f"{SERVERS}/{created['id']}",
        headers=headers,
        json={"url": f"{second.url}/mcp", "headers": {"Authorization": "Bearer for-the-second"}},
    )
    assert moved.json()["header_names"] == ["Authorization"]
    assert (await _discover(http, headers, created["id"]))["reachable"]
    assert "Bearer for-the-second" in _secrets(second_log) and SECRET not in _secrets(second_log)


async def test_headers_of_a_row_moved_behind_the_apis_back_do_not_open(
    http: httpx.AsyncClient,
    make_tenant: Any,
    admin_url: str,
    demo: tuple[LiveServer, DemoLog],
    other: tuple[LiveServer, DemoLog],
) -> None:
    (first, _), (second, second_log) = demo, other
    headers = auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)
    created = await register(http, headers, first.url)
    db_state.move_mcp_server(admin_url, created["id"], url=f"{second.url}/mcp")
    found = await _discover(http, headers, created["id"])
    assert (found["reachable"], found["error"]) == (False, "mcp_headers_refused")
    assert second_log.headers == []  # not even a connection without them

    # Even with the recorded origin rewritten too, the envelope itself (its KMS encryption context) refuses.
    db_state.move_mcp_server(admin_url, created["id"], headers_origin=second.url)
    found = await _discover(http, headers, created["id"])
    assert (found["reachable"], found["error"]) == (False, "mcp_headers_refused")
    assert second_log.headers == []
