"""A background loop on the running event loop: call `tick` now and then every `interval` seconds until
`stop()`. A failing tick is logged and the loop goes on (the dev server's scheduler and run recovery)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any


class Periodic:
    def __init__(self, name: str, interval: float, tick: Callable[[], Awaitable[Any]], log: logging.Logger) -> None:
        self.name = name
        self.interval = interval
        self._tick = tick
        self._log = log
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                await self._tick()
            except Exception:
                self._log.exception("%s: a tick failed", self.name)
            try:
                await asyncio.wait_for(self._stop.wait(), timeout=self.interval)
            except TimeoutError:
                pass

    def start(self) -> None:
        """Run the loop on the running event loop until `stop()`."""
        self._stop.clear()
        self._task = asyncio.get_running_loop().create_task(self._loop(), name=self.name)

    async def stop(self) -> None:
        """Let the current tick finish, then end the loop."""
        self._stop.set()
        if self._task is not None:
            await self._task
            self._task = None
