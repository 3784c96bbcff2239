"""The offline demo MCP server (streamable HTTP, built with the `mcp` SDK): one read-only tool and one tool that
acts. `pa dev` and the tests serve it on loopback; nothing leaves the machine."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

WEATHER = {"paris": "light rain, 14 °C", "london": "overcast, 12 °C", "tokyo": "clear, 21 °C"}


@dataclass
class DemoLog:
    """What the demo server saw: the request headers of every HTTP request and every note it "sent"."""

    headers: list[dict[str, str]] = field(default_factory=list)
    sent: list[dict[str, str]] = field(default_factory=list)


def demo_server(seen: DemoLog) -> Any:
    """The demo `MCPServer` with its two tools (`seen` records the notes it "sent")."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("pa-demo", instructions="Demo tools of Personal Agent (offline).")

    @server.tool(description="Today's weather in a city (demo data; read-only).")
    def weather(city: str) -> str:
        return f"{city}: {WEATHER.get(city.strip().lower(), 'sunny, 20 °C')}"

    @server.tool(description="Post a note to a team's board (demo: recorded by the server, nothing leaves).")
    def post_note(team: str, text: str) -> str:
        seen.sent.append({"team": team, "text": text})
        return f"posted to {team}"

    return server


def demo_mcp_app(log: DemoLog | None = None) -> ASGIApp:
    """The ASGI app serving the demo server at `/mcp` (`log` records what it saw)."""
    seen = log if log is not None else DemoLog()
    inner = demo_server(seen).streamable_http_app(json_response=True, stateless_http=True)

    async def app(scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] == "http":
            seen.headers.append({k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]})
        await inner(scope, receive, send)

    return app


DEMO_ORG = "acme"
DEMO_SERVER_NAME = "demo"
DEMO_POLICIES = {"weather": {"acts": False, "approval": "never"}, "post_note": {"acts": True, "approval": "gate"}}
"""The read-only tool runs without asking; the acting one is left to the confidence gate."""


class DemoMcpThread:
    """The demo server on a free loopback port, in a thread with its own loop (`pa dev`); `stop` ends it."""

    def __init__(self) -> None:
        from personal_agent.local.ports import free_port

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._server: Any = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="pa-demo-mcp", daemon=True)

    def _serve(self) -> None:
        from personal_agent.local.serving import ReadyServer, server_config

        # Built here, not by the caller: importing the `mcp` SDK takes a second `pa dev` need not wait for.
        config = server_config(demo_mcp_app(), host="127.0.0.1", port=self.port)
        self._server = ReadyServer(config)
        if not self._stopped.is_set():
            asyncio.run(self._server.serve())

    def start(self) -> DemoMcpThread:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._server is not None:
            self._server.should_exit = True
        self._thread.join(timeout=15)


async def register_demo_server(url: str, org_slug: str = DEMO_ORG) -> dict[str, Any]:
    """Register (or point at `url` again) the demo server for the demo org: an idempotent upsert by name."""
    from personal_agent.identity.directory import ensure_org
    from personal_agent.mcp_servers import service

    org_id = await ensure_org(org_slug)
    values: dict[str, Any] = {"url": url, "trust_tier": 2, "tool_policies": DEMO_POLICIES, "enabled": True}
    existing = [s for s in await service.list_servers(org_id) if s["name"] == DEMO_SERVER_NAME]
    if existing:
        return await service.update(org_id, existing[0]["id"], values)
    values.update(name=DEMO_SERVER_NAME, transport="http", headers=None, allowed_tools=None)
    return await service.create(org_id, values)


if __name__ == "__main__":  # `python -m personal_agent.local.demo_mcp`: the demo server over stdio (local mode)
    demo_server(DemoLog()).run("stdio")
