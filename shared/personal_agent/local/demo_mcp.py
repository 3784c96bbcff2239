"""The offline demo MCP server (streamable HTTP, built with the `mcp` SDK): one read-only tool and one tool that
acts. `pa dev` and the tests serve it on loopback; nothing leaves the machine."""

from __future__ import annotations

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


def demo_mcp_app(log: DemoLog | None = None) -> ASGIApp:
    """The ASGI app serving the demo server at `/mcp` (`log` records what it saw)."""
    from mcp.server.mcpserver import MCPServer

    seen = log if log is not None else DemoLog()
    server = MCPServer("pa-demo", instructions="Demo tools of Personal Agent (offline).")

    @server.tool(description="Today's weather in a city (demo data; read-only).")
    def weather(city: str) -> str:
        return f"{city}: {WEATHER.get(city.strip().lower(), 'sunny, 20 °C')}"

    @server.tool(description="Post a note to a team's board (demo: recorded by the server, nothing leaves).")
    def post_note(team: str, text: str) -> str:
        seen.sent.append({"team": team, "text": text})
        return f"posted to {team}"

    inner = server.streamable_http_app(json_response=True, stateless_http=True)

    async def app(scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] == "http":
            seen.headers.append({k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]})
        await inner(scope, receive, send)

    return app
