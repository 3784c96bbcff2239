"""MCP servers are outbound URLs like any other, and their write-only headers stay with the origin they were entered
for (issue 28, items 4 and 5), on `pa dev` as a user runs it, over HTTP, with fake MCP servers on loopback started
by the test. The operator allow-lists two of them (and three ports that fail in different ways); an org admin cannot
register another loopback port, the API itself, a metadata address (plain or inside NAT64) or a command line; every
connection failure is the same opaque code; the demo server `pa dev` runs itself still works; and pointing a server
at another origin drops its auth header, so the second server never receives it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from personal_agent.local.demo_mcp import DemoLog
from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.live_server import LiveServer
from tests.mcp_demo import SECRET, serve_demo

pytestmark = pytest.mark.timeout(240)
SERVERS = "/api/v1/admin/mcp-servers"


@dataclass(frozen=True)
class World:
    dev: DevServer
    first: tuple[LiveServer, DemoLog]
    second: tuple[LiveServer, DemoLog]
    internal: tuple[LiveServer, DemoLog]
    failing: dict[str, int]


def _speaks_ssh() -> tuple[int, threading.Event]:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stopped = threading.Event()

    def serve() -> None:
        with listener:
            while not stopped.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], stopped


async def _not_found(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"not found"})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    ssh_port, stop_ssh = _speaks_ssh()
    web = LiveServer(_not_found).start()
    with serve_demo() as first, serve_demo() as second, serve_demo() as internal:
        failing = {"closed": closed_port, "ssh": ssh_port, "http": web.port}
        allowed = [first[0].port, second[0].port, *failing.values()]
        allow = ",".join(f"127.0.0.1:{port}" for port in allowed)
        try:
            data = tmp_path_factory.mktemp("pa-dev-mcp-governance")
            with running_pa_dev(data, env_extra={"PA_MCP_ALLOW_HOSTS": allow}) as dev:
                yield World(dev, first, second, internal, failing)
        finally:
            web.stop()
            stop_ssh.set()


def _create(http: httpx.Client, auth: dict[str, str], name: str, url: str, **extra: Any) -> httpx.Response:
    return http.post(SERVERS, headers=auth, json={"name": name, "url": url, "trust_tier": 2, **extra})


def _tools(http: httpx.Client, headers: dict[str, str], server_id: str) -> dict[str, Any]:
    found = http.get(f"{SERVERS}/{server_id}/tools", headers=headers)
    assert found.status_code == 200, found.text
    return dict(found.json())


def test_internal_urls_metadata_and_command_lines_are_refused(world: World) -> None:
    internal, internal_log = world.internal
    api_port = world.dev.url.rsplit(":", 1)[1]
    refused = {
        "loopback": f"{internal.url}/mcp",
        "api": f"http://127.0.0.1:{api_port}/api/v1/admin/settings",
        "metadata": "http://169.254.169.254/latest/meta-data/iam/",
        "nat64": f"http://[64:ff9b::7f00:1]:{internal.port}/mcp",
        "sixtofour": f"http://[2002:7f00:1::]:{internal.port}/mcp",
    }
    with httpx.Client(base_url=world.dev.url, timeout=60) as http:
        headers = world.dev.auth_for("boss", "org-admin")
        for name, url in refused.items():
            answer = _create(http, headers, name, url)
            assert (answer.status_code, answer.json()["code"]) == (422, "mcp_url_refused"), (name, answer.text)
        command = _create(http, headers, "shell", "id", transport="stdio")
        assert (command.status_code, command.json()["code"]) == (422, "mcp_stdio_not_allowed"), command.text
        assert http.get(SERVERS, headers=headers).json()["items"] == []
    assert internal_log.headers == []


def test_every_connection_failure_is_one_opaque_code(world: World) -> None:
    errors = {}
    with httpx.Client(base_url=world.dev.url, timeout=60) as http:
        headers = world.dev.auth_for("boss", "org-admin")
        for kind, port in world.failing.items():
            created = _create(http, headers, f"fail-{kind}", f"http://127.0.0.1:{port}/mcp")
            assert created.status_code == 201, created.text
            found = _tools(http, headers, created.json()["id"])
            errors[kind] = (found["reachable"], found["error"])
    assert set(errors.values()) == {(False, "mcp_server_unreachable")}, errors


def test_the_demo_server_pa_dev_runs_itself_still_works(world: World) -> None:
    with httpx.Client(base_url=world.dev.url, timeout=60) as http:
        headers = world.dev.auth_for("boss", "org-admin", org="acme")
        demo = next(s for s in http.get(SERVERS, headers=headers).json()["items"] if s["name"] == "demo")
        found = _tools(http, headers, demo["id"])
    assert found["reachable"] is True and {t["name"] for t in found["tools"]} == {"demo_weather", "demo_post_note"}


def test_moving_a_server_to_another_origin_drops_its_secret(world: World) -> None:
    (first, first_log), (second, second_log) = world.first, world.second
    with httpx.Client(base_url=world.dev.url, timeout=60) as http:
        headers = world.dev.auth_for("boss", "org-admin")
        created = _create(http, headers, "crm", f"{first.url}/mcp", headers={"Authorization": SECRET})
        assert created.status_code == 201, created.text
        server_id = created.json()["id"]
        assert _tools(http, headers, server_id)["reachable"]
        assert any(h.get("authorization") == SECRET for h in first_log.headers)  # entered for the first

        moved = http.patch(f"{SERVERS}/{server_id}", headers=headers, json={"url": f"{second.url}/mcp"})
        assert moved.status_code == 200, moved.text
        assert (moved.json()["header_names"], moved.json()["has_headers"]) == ([], False)
        assert _tools(http, headers, server_id)["reachable"]
    assert second_log.headers and all(h.get("authorization") != SECRET for h in second_log.headers)
