"""Serving the built web chat (`frontend/dist`) from the dev server, with a single-page-app fallback.

The fallback is the router's `default` app, which runs only when no route matched, so it can never
shadow an API route, whatever order routers are added in; API-ish paths still get the JSON 404.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

DIST = Path(__file__).resolve().parents[3] / "frontend" / "dist"
# Paths that belong to the server: an unknown one is a 404 from the API, never the web chat.
RESERVED = ("/api", "/healthz", "/readyz", "/health", "/.well-known", "/dev-issuer", "/openapi.json", "/docs", "/redoc")
NOT_BUILT = (
    "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Personal Agent</title></head>"
    "<body><main><h1>The web chat is not built</h1><p>Run <code>make frontend</code> (or "
    "<code>npm ci &amp;&amp; npm run build</code> in <code>frontend/</code>) and reload. The API is at "
    "<a href='/docs'>/docs</a>.</p></main></body></html>"
)


def _reserved(path: str) -> bool:
    return any(path == prefix or path.startswith(prefix + "/") for prefix in RESERVED)


class WebChat:
    """An ASGI app: a file from `dist` when one matches, else `index.html` (the client routes)."""

    def __init__(self, dist: Path, fallback: ASGIApp) -> None:
        self.dist = dist.resolve()
        self.fallback = fallback

    def _file(self, path: str) -> Path | None:
        candidate = (self.dist / path.lstrip("/")).resolve()
        if candidate.is_relative_to(self.dist) and candidate.is_file():
            return candidate
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD") or _reserved(path):
            await self.fallback(scope, receive, send)
            return
        response: Response
        index = self.dist / "index.html"
        found = self._file(path) if path not in ("", "/") else None
        if found is not None:
            # Vite puts content hashes in asset names: those never change, everything else is revalidated.
            immutable = found.parent.name == "assets"
            cache = "public, max-age=31536000, immutable" if immutable else "no-cache"
            response = FileResponse(found, headers={"Cache-Control": cache})
        elif "." in path.rsplit("/", 1)[-1]:
            await self.fallback(scope, receive, send)  # a missing file (favicon.ico, a stale asset): 404
            return
        elif index.is_file():
            response = FileResponse(index, headers={"Cache-Control": "no-cache"})
        else:
            response = HTMLResponse(NOT_BUILT, status_code=503, headers={"Cache-Control": "no-store"})
        await response(scope, receive, send)


def mount_web_chat(app: FastAPI, dist: Path = DIST) -> None:
    """Serve the web chat at `/` for every GET that no route answers."""
    app.router.default = WebChat(dist, app.router.default)
