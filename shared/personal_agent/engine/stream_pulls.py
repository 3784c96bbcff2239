"""Pulling a model's stream without a trip through the event loop per chunk (issue 17).

pydantic-ai serializes the pulls of every streamed response through `PeekableAsyncStream`, whose lock is an
`anyio.Lock()`: one that yields to the event loop (`cancel_shielded_checkpoint`) on every acquire, contended or
not. A streamed model response passes two or three of them per chunk (the provider's, the continuation wrapper's
and, with fallbacks, the `FallbackModel`'s), so a 200-chunk reply made 400-600 loop round trips that did nothing
(`bench/agent_floor.py`: 12.8 -> 7.7 CPU ms per run; the model's own stream is ~6). `install()` gives each new
stream a fast-acquire lock instead: the same mutual exclusion (a pull and `aclose()` still never overlap) and the
same cancellation check on every acquire, without the yield when nobody else holds the lock. A real provider's
stream still yields wherever it waits for the network; one that never waits (a scripted model) yields at the
emitter's flushes and the cancel watch's Redis polls.

A pydantic-ai whose streams have no `_source_lock` is left as it is.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
from pydantic_ai._utils import PeekableAsyncStream

_SHIPPED_INIT = PeekableAsyncStream.__init__


@functools.wraps(_SHIPPED_INIT)
def _init_with_fast_lock(self: PeekableAsyncStream[Any, Any], source: Any) -> None:
    _SHIPPED_INIT(self, source)
    if isinstance(getattr(self, "_source_lock", None), anyio.Lock):
        self._source_lock = anyio.Lock(fast_acquire=True)


def install() -> None:
    """Every `PeekableAsyncStream` made from now on pulls under a fast-acquire lock (idempotent)."""
    PeekableAsyncStream.__init__ = _init_with_fast_lock  # type: ignore[method-assign]


def restore() -> None:
    """pydantic-ai's own lock again (for `bench/agent_floor.py`'s comparison)."""
    PeekableAsyncStream.__init__ = _SHIPPED_INIT  # type: ignore[method-assign]


def installed() -> bool:
    return PeekableAsyncStream.__init__ is _init_with_fast_lock
