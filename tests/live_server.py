"""The dev app served by a real uvicorn on loopback, in a thread, for tests that stream (SSE)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import uvicorn

from personal_agent.local.ports import free_port
from personal_agent.local.serving import ReadyServer


class LiveServer:
    """uvicorn in a background thread with its own event loop (inline runs execute on that loop)."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self.server = ReadyServer(config)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    def start(self) -> LiveServer:
        self.thread.start()
        if not self.server.ready.wait(30):
            raise RuntimeError("the live server did not start")
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
