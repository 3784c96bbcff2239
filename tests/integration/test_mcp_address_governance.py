"""MCP servers are outbound URLs like any other (issue 28, item 4), over the admin API: a URL on loopback, the VPC
or a metadata address (also wrapped in NAT64 or 6to4) is refused at save unless the operator allow-lists the host
(metadata never); it is checked again before every connection, pinned to the checked address, with no redirect
followed; whatever fails, the error is one opaque code; a stdio server is only one of the operator's commands."""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest

from personal_agent.local.demo_mcp import DemoLog, demo_mcp_app
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.live_server import LiveServer
from tests.mcp_demo import ADMIN, register

Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
SERVERS = "/api/v1/admin/mcp-servers"


@pytest.fixture
def admin(make_tenant: Any) -> dict[str, str]:
    return auth_headers(make_tenant(roles=ADMIN), roles=ADMIN)


@pytest.fixture
def no_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's default: no internal MCP host is allow-listed."""
    monkeypatch.setattr(get_settings(), "mcp_allow_hosts", "", raising=False)


def _body(url: str, name: str = "probe", **extra: Any) -> dict[str, Any]:
    return {"name": name, "url": url, "trust_tier": 2, **extra}


@pytest.mark.usefixtures("no_allow_list")
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/mcp",
        "http://localhost:{port}/mcp",
        "http://10.0.0.7/mcp",
        "http://169.254.169.254/latest/meta-data/",
        "http://[64:ff9b::7f00:1]:{port}/mcp",  # NAT64 of loopback
        "http://[2002:7f00:1::]:{port}/mcp",  # 6to4 of loopback
        "http://[::ffff:127.0.0.1]:{port}/mcp",
        "ftp://example.com/mcp",
    ],
)
async def test_an_internal_url_is_refused_at_save(
    http: httpx.AsyncClient, admin: dict[str, str], demo: tuple[LiveServer, DemoLog], url: str
) -> None:
    server, log = demo
    created = await http.post(SERVERS, headers=admin, json=_body(url.format(port=server.port)))
    assert (created.status_code, created.json()["code"]) == (422, "mcp_url_refused"), created.text
    assert (await http.get(SERVERS, headers=admin)).json()["items"] == []
    assert log.headers == []  # nothing was sent to the server


async def test_an_allow_listed_host_is_saved_but_a_metadata_address_never(
    http: httpx.AsyncClient, admin: dict[str, str], demo: tuple[LiveServer, DemoLog], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, _ = demo
    monkeypatch.setattr(get_settings(), "mcp_allow_hosts", f"127.0.0.1:{server.port},169.254.169.254", raising=False)
    assert (await http.post(SERVERS, headers=admin, json=_body(f"{server.url}/mcp"))).status_code == 201
    metadata = await http.post(SERVERS, headers=admin, json=_body("http://169.254.169.254/", name="meta"))
    assert (metadata.status_code, metadata.json()["code"]) == (422, "mcp_url_refused")
    other_port = await http.post(SERVERS, headers=admin, json=_body(f"http://127.0.0.1:{server.port + 1}/", name="x"))
    assert (other_port.status_code, other_port.json()["code"]) == (422, "mcp_url_refused")
    patched = await http.patch(
        f"{SERVERS}/{(await http.get(SERVERS, headers=admin)).json()['items'][0]['id']}",
        headers=admin,
        json={"url": "http://[64:ff9b::a9fe:a9fe]/"},
    )
    assert (patched.status_code, patched.json()["code"]) == (422, "mcp_url_refused")


async def test_the_url_is_checked_again_before_every_connection(
    http: httpx.AsyncClient, admin: dict[str, str], demo: tuple[LiveServer, DemoLog], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, log = demo
    created = await register(http, admin, server.url)
    monkeypatch.setattr(
        get_settings(), "mcp_allow_hosts", "", raising=False
    )  # the operator takes the host off the list
    log.headers.clear()
    found = (await http.get(f"{SERVERS}/{created['id']}/tools", headers=admin)).json()
    assert (found["reachable"], found["error"], found["tools"]) == (False, "mcp_url_refused", [])
    assert log.headers == []  # no connection was made


def _serve_raw(reply: bytes) -> tuple[int, Callable[[], None]]:
    """A TCP port on loopback that answers every connection with `reply` (not HTTP) and closes it."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stopped = threading.Event()

    def serve() -> None:
        while not stopped.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def stop() -> None:
        stopped.set()
        thread.join(5)
        listener.close()

    return listener.getsockname()[1], stop


async def _not_found(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"nginx: not found"})


@pytest.fixture
def ports() -> Iterator[dict[str, int]]:
    """A closed port, a port speaking another protocol, and an HTTP server that is no MCP server."""
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    raw_port, stop_raw = _serve_raw(b"SSH-2.0-OpenSSH_9.6\r\n")
    web = LiveServer(_not_found).start()
    try:
        yield {"closed": closed_port, "ssh": raw_port, "http": web.port}
    finally:
        web.stop()
        stop_raw()


async def test_every_connection_failure_is_one_opaque_code(
    http: httpx.AsyncClient, admin: dict[str, str], ports: dict[str, int]
) -> None:
    errors = {}
    for kind, port in ports.items():
        created = await http.post(SERVERS, headers=admin, json=_body(f"http://127.0.0.1:{port}/mcp", name=kind))
        assert created.status_code == 201, created.text
        found = (await http.get(f"{SERVERS}/{created.json()['id']}/tools", headers=admin)).json()
        assert found["reachable"] is False
        errors[kind] = found["error"]
    assert set(errors.values()) == {"mcp_server_unreachable"}, errors


def _redirecting(log: DemoLog) -> Any:
    """The demo server at `/mcp`, and `/old/mcp` answering 307 to it (the same origin)."""
    inner = demo_mcp_app(log)

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/old/mcp":
            await send({"type": "http.response.start", "status": 307, "headers": [(b"location", b"/mcp")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await inner(scope, receive, send)

    return app


async def test_a_redirect_is_not_followed(http: httpx.AsyncClient, admin: dict[str, str]) -> None:
    log = DemoLog()
    server = LiveServer(_redirecting(log)).start()
    try:
        created = await register(http, admin, f"{server.url}/old")
        found = (await http.get(f"{SERVERS}/{created['id']}/tools", headers=admin)).json()
    finally:
        server.stop()
    assert (found["reachable"], found["error"]) == (False, "mcp_server_unreachable")
    assert log.headers == []  # the redirect's target (the demo server) was never asked, with the secret or without


async def test_the_connection_goes_to_the_checked_address_with_the_host_kept() -> None:
    """A name that resolves nowhere (as if DNS answered otherwise by now) still reaches the address that was
    checked, with its own name in the Host header; a request for another origin is refused."""
    from personal_agent.mcp_servers.endpoint import CheckedUrl
    from personal_agent.mcp_servers.pinned_http import PinnedTransport

    hosts: list[str] = []

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        hosts.append(dict(scope["headers"])[b"host"].decode())
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"pinned"})

    server = LiveServer(app).start()
    try:
        url = httpx2.URL(f"http://mcp.pinned.invalid:{server.port}/mcp")
        transport = PinnedTransport(CheckedUrl(url, ipaddress.ip_address("127.0.0.1")))
        async with httpx2.AsyncClient(transport=transport, max_redirects=0) as client:
            answer = await client.get(url)
            with pytest.raises(httpx2.ConnectError):
                await client.get(f"http://127.0.0.1:{server.port}/mcp")
    finally:
        server.stop()
    assert (answer.status_code, answer.text) == (200, "pinned")
    assert hosts == [f"mcp.pinned.invalid:{server.port}"]


async def test_a_stdio_command_sent_over_the_api_never_runs(
    http: httpx.AsyncClient, admin: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = tmp_path / "ran"
    for command in ("id", f"touch {ran}", f"{sys.executable} -m personal_agent.local.demo_mcp"):
        created = await http.post(SERVERS, headers=admin, json=_body(command, transport="stdio"))
        assert (created.status_code, created.json()["code"]) == (422, "mcp_stdio_not_allowed"), created.text

    # One the operator listed is saved; taken off the list, it is not started again.
    monkeypatch.setattr(get_settings(), "mcp_stdio_commands", f"touch {ran}\n", raising=False)
    created = await http.post(SERVERS, headers=admin, json=_body(f"touch {ran}", name="listed", transport="stdio"))
    assert created.status_code == 201, created.text
    monkeypatch.setattr(get_settings(), "mcp_stdio_commands", "", raising=False)
    found = (await http.get(f"{SERVERS}/{created.json()['id']}/tools", headers=admin)).json()
    assert (found["reachable"], found["error"]) == (False, "mcp_stdio_not_allowed")
    assert not ran.exists()
