"""The dev server answers only requests that name it by a loopback host (the DNS rebinding defence).

A page on evil.example can have the browser re-resolve evil.example to 127.0.0.1 and then read the dev
server's answers as if they were its own origin. The browser still sends `Host: evil.example`, so the
dev server refuses (400 `host_not_allowed`, before any route runs) every Host but `localhost`,
`127.0.0.1` and `[::1]` — with any port: a loopback name cannot be rebound, and the web chat's Vite
proxy forwards its own port — and the names listed in PA_ALLOWED_HOSTS (`name` for any port,
`name:port` for that port only).
"""

from __future__ import annotations

import uuid

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from personal_agent.identity.dev_issuer import split_host
from personal_agent.settings import Settings, get_settings

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})


def host_allowed(header: str, settings: Settings) -> bool:
    """Whether a request with this Host header is addressed to the dev server."""
    parsed = split_host(header)
    if parsed is None:
        return False
    name, port = parsed
    if name in LOOPBACK_HOSTS:
        return True
    for entry in settings.allowed_hosts.split(","):
        allowed = split_host(entry) if entry.strip() else None
        if allowed is not None and allowed[0] == name and allowed[1] in (None, port):
            return True
    return False


class HostGuard:
    """Plain ASGI middleware: refuse HTTP requests and WebSockets whose Host the dev server does not own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or host_allowed(
            Headers(scope=scope).get("host", ""), get_settings()
        ):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        request_id = uuid.uuid4().hex
        body = {
            "code": "host_not_allowed",
            "message": "this server answers only to localhost, 127.0.0.1 and [::1] (add names with PA_ALLOWED_HOSTS)",
            "request_id": request_id,
        }
        await JSONResponse(body, status_code=400, headers={"X-Request-Id": request_id})(scope, receive, send)
