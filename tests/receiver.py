"""An HTTP endpoint on loopback, started by a test: it answers `status` and keeps every request it got (a
workflow output's callback, a push service)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest


@dataclass
class Receiver:
    """An HTTP endpoint on loopback that answers `status` and keeps every request it got."""

    status: int = 204
    requests: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def wait_for(self, count: int, timeout: float = 30) -> list[tuple[dict[str, str], bytes]]:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.requests) >= count, timeout), self.requests
            return list(self.requests)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server API)
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            with got.arrived:
                got.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                got.arrived.notify_all()
            self.send_response(got.status)
            self.end_headers()
            self.wfile.write(b"receiver says no" if got.status >= 400 else b"")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    got.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield got
    server.shutdown()
    server.server_close()
