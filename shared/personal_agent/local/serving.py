"""uvicorn with a readiness signal: `ready` is set once the server listens, so callers wait on an event
instead of polling a port."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import uvicorn


class ReadyServer(uvicorn.Server):
    """A uvicorn server that sets `ready` (and calls `on_ready`) when it has started listening."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self._on_ready = on_ready

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            if self._on_ready is not None:
                self._on_ready()
            self.ready.set()
