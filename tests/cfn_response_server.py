"""A loopback HTTP server standing in for CloudFormation's presigned response URL: it records every PUT."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ReceivedResponse:
    path: str
    content_type: str | None
    body: dict[str, Any]


@dataclass
class ResponseServer:
    """Collects custom resource responses; `url(name)` is a presigned-looking URL to answer to."""

    received: list[ReceivedResponse] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    def start(self) -> ResponseServer:
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length))
                received.append(ReceivedResponse(self.path, self.headers.get("Content-Type"), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def url(self, name: str) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/{name}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=test"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
