"""Serving the built web chat (`frontend/dist`) from the dev server, with a single-page-app fallback.

The fallback is the router's `default` app, which runs only when no route matched, so it can never
shadow an API route, whatever order routers are added in; API-ish paths still get the JSON 404.

Every page and asset goes out with the web chat's Content-Security-Policy (the same policy CloudFront
adds on AWS, `WebSecurityHeaders` in template.yaml): the app's own scripts, styles and images only, and
requests only to its own origin (plus the OIDC issuer), so model output that slips an `<img>` or a
fetch past the Markdown sanitiser still cannot send anything elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import FastAPI
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from personal_agent.errors import ConfigurationError
from personal_agent.settings import Settings, get_settings

DIST = Path(__file__).resolve().parents[3] / "frontend" / "dist"
# Paths that belong to the server: an unknown one is a 404 from the API, never the web chat.
RESERVED = ("/api", "/healthz", "/readyz", "/health", "/.well-known", "/dev-issuer", "/openapi.json", "/docs", "/redoc")
NOT_BUILT = (
    "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Personal Agent</title></head>"
    "<body><main><h1>The web chat is not built</h1><p>Run <code>make frontend</code> (or "
    "<code>npm ci &amp;&amp; npm run build</code> in <code>frontend/</code>) and reload. The API is at "
    "<a href='/docs'>/docs</a>.</p></main></body></html>"
)


# Everything but connect-src is the same on AWS (tests/unit/test_template_web_security.py holds the two together).
CSP_DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("default-src", "'none'"),
    ("script-src", "'self'"),
    ("style-src", "'self'"),
    ("img-src", "'self'"),
    ("font-src", "'self'"),
    ("manifest-src", "'self'"),
    ("base-uri", "'none'"),
    ("form-action", "'self'"),
    ("frame-ancestors", "'none'"),
)
_SOURCE = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d{1,5})?$")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def content_security_policy(connect_sources: Iterable[str] = ()) -> str:
    """The web chat's CSP; `connect_sources` are the origins besides its own it may fetch from."""
    connect = " ".join(dict.fromkeys(["'self'", *connect_sources]))
    return "; ".join(f"{name} {value}" for name, value in (*CSP_DIRECTIVES, ("connect-src", connect)))


def web_chat_headers(settings: Settings) -> dict[str, str]:
    """Security headers for every web chat response: the CSP and what CloudFront adds beside it."""
    extra = settings.web_connect_sources.replace(",", " ").split()
    for source in extra:
        if not _SOURCE.match(source):
            raise ConfigurationError(
                f"PA_WEB_CONNECT_SOURCES: {source!r} is not an origin like https://auth.example.com"
            )
    sources = ([_origin(settings.oidc_issuer)] if settings.oidc_issuer else []) + extra
    if settings.is_local and settings.aws_endpoint_url:
        # Presigned uploads (attachments, knowledge documents) go straight from the browser to moto's S3.
        sources.append(_origin(settings.aws_endpoint_url))
    return {
        "Content-Security-Policy": content_security_policy(sources),
        "Referrer-Policy": "same-origin",
        "X-Content-Type-Options": "nosniff",
        # Links in model output must not leak data through DNS lookups made before anyone clicks.
        "X-DNS-Prefetch-Control": "off",
    }


def _reserved(path: str) -> bool:
    return any(path == prefix or path.startswith(prefix + "/") for prefix in RESERVED)


class WebChat:
    """An ASGI app: a file from `dist` when one matches, else `index.html` (the client routes)."""

    def __init__(self, dist: Path, fallback: ASGIApp, headers: dict[str, str] | None = None) -> None:
        self.dist = dist.resolve()
        self.fallback = fallback
        self.headers = headers if headers is not None else web_chat_headers(get_settings())

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
            response = FileResponse(found, headers={"Cache-Control": cache, **self.headers})
        elif "." in path.rsplit("/", 1)[-1]:
            await self.fallback(scope, receive, send)  # a missing file (favicon.ico, a stale asset): 404
            return
        elif index.is_file():
            response = FileResponse(index, headers={"Cache-Control": "no-cache", **self.headers})
        else:
            response = HTMLResponse(NOT_BUILT, status_code=503, headers={"Cache-Control": "no-store", **self.headers})
        await response(scope, receive, send)


def mount_web_chat(app: FastAPI, dist: Path = DIST) -> None:
    """Serve the web chat at `/` for every GET that no route answers."""
    app.router.default = WebChat(dist, app.router.default)
