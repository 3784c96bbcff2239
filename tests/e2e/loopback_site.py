"""A small website on loopback for the knowledge sources' tests: pages with ETags (answering 304 to a matching
If-None-Match) or, for the paths the test gives a Last-Modified, that and no ETag (answering 304 to a matching
If-Modified-Since), redirects, a sitemap listing what the test says, and a log of every request."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Site:
    """A small website on loopback: path -> HTML, with ETags; every request is logged (path, If-None-Match)."""

    pages: dict[str, str]
    sitemap: list[str] = field(default_factory=list)
    requests: list[tuple[str, str | None, int]] = field(default_factory=list)
    etags: dict[str, str] = field(default_factory=dict)
    """A path's ETag as the test sets it (a redeploy that changes it, the page the same); else one of its content."""
    last_modified: dict[str, str] = field(default_factory=dict)
    """Paths served with this Last-Modified and no ETag."""
    redirects: dict[str, str] = field(default_factory=dict)
    """Paths that answer 302 to this location."""
    conditional: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    """Every request's (path, If-None-Match, If-Modified-Since)."""
    port: int = 0

    def serve(self) -> ThreadingHTTPServer:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path == "/sitemap.xml":
                    urls = "".join(f"<url><loc>{u}</loc></url>" for u in site.sitemap)
                    body = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
                    return self._answer(200, body.encode(), "application/xml", None)
                site.conditional.append(
                    (self.path, self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since"))
                )
                if self.path in site.redirects:
                    return self._answer(302, b"", "text/plain", None, {"Location": site.redirects[self.path]})
                if self.path not in site.pages:
                    return self._answer(404, b"not found", "text/plain", None)
                data = site.pages[self.path].encode()
                if self.path in site.last_modified:
                    stamp = {"Last-Modified": site.last_modified[self.path]}
                    if self.headers.get("If-Modified-Since") == stamp["Last-Modified"]:
                        return self._answer(304, b"", "text/html", None, stamp)
                    return self._answer(200, data, "text/html; charset=utf-8", None, stamp)
                etag = site.etags.get(self.path) or '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    return self._answer(304, b"", "text/html", etag)
                return self._answer(200, data, "text/html; charset=utf-8", etag)

            def _answer(
                self, status: int, body: bytes, kind: str, etag: str | None, more: dict[str, str] | None = None
            ) -> None:
                site.requests.append((self.path, self.headers.get("If-None-Match"), status))
                self.send_response(status)
                self.send_header("Content-Type", kind)
                for name, value in (more or {}).items():
                    self.send_header(name, value)
                if etag:
                    self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
