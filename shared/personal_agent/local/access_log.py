"""The dev server's access log: one line per HTTP request when it ends (method, path, status, milliseconds) on
`personal_agent.access`, in the process's one log format (`observability.route_process_logs`). The path is logged
without its query string, which may carry what does not belong in a log."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from personal_agent.observability import ACCESS_LOGGER

log = logging.getLogger(ACCESS_LOGGER)


class AccessLog:
    """Pure ASGI middleware (streams pass through untouched): the request's line once its response ended, or
    once it failed (status 500 when no response had started)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            ms = round((time.perf_counter() - started) * 1000)
            method, path = scope["method"], scope["path"]
            log.info(
                "%s %s %d %d ms",
                method,
                path,
                status,
                ms,
                extra={"method": method, "path": path, "status": status, "duration_ms": ms},
            )
