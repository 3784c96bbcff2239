"""Running async code from sync Lambda handlers on one event loop per thread.

A Lambda container handles one invocation at a time on one thread, so its loop (and the DB pool
bound to it) lives as long as the container. The local dispatcher runs handlers on a few worker
threads, each with its own long-lived loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
_local = threading.local()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion on this thread's persistent event loop."""
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _local.loop = loop
    return loop.run_until_complete(coro)
