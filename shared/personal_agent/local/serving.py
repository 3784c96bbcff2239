"""uvicorn with a readiness signal: `ready` is set once the server listens, so callers wait on an event
instead of polling a port."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import threading
from collections.abc import Callable
from typing import Any, Literal

import uvicorn

# How long a stopping server lets requests in flight finish (uvicorn's default is forever).
GRACEFUL_SECONDS = 5


def loop_name() -> Literal["uvloop", "asyncio"]:
    """The event loop servers run on: uvloop unless `PA_FAST_LOOP=0` (or it is not installed)."""
    from personal_agent.settings import get_settings

    if not get_settings().fast_loop or importlib.util.find_spec("uvloop") is None:
        return "asyncio"
    return "uvloop"


def server_config(app: Any, **options: Any) -> uvicorn.Config:
    """uvicorn for `pa dev`'s servers: warnings and errors only, and no logging setup of its own, so its records
    reach the process's handler in the one log format (`observability.route_process_logs`); the dev app writes its
    own access log (`local.access_log`). Ctrl-C waits `GRACEFUL_SECONDS` for requests in flight, then cancels them:
    an open event stream (a browser tab, a follower) never ends on its own, and would hold the stop forever."""
    options.setdefault("timeout_graceful_shutdown", GRACEFUL_SECONDS)
    return uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="on", **options)


def serve(server: uvicorn.Server, sockets: list[socket.socket] | None = None) -> None:
    """Run `server` until it stops, on the loop `loop_name` picks (on `sockets` when given, already bound)."""
    if loop_name() == "uvloop":
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(server.serve(sockets=sockets))
    else:
        asyncio.run(server.serve(sockets=sockets))


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
