"""Fast path: pydantic-ai's stream pulls without a trip through the event loop per chunk.

Patches `pydantic_ai._utils.PeekableAsyncStream.__init__`, relying on its `_source_lock` being an `anyio.Lock`.
pydantic-ai serializes every pull of a streamed response through that lock, which yields to the event loop on
every acquire, contended or not; a streamed response passes two or three of them per chunk (the provider's, the
continuation wrapper's and, with fallbacks, the `FallbackModel`'s). `install()` gives each new stream a
fast-acquire lock instead: the same mutual exclusion (a pull and `aclose()` still never overlap) and the same
cancellation check on every acquire, without the yield when nobody else holds the lock. A real provider's
stream still yields wherever it waits for the network.

A pydantic-ai whose streams have no `_source_lock` is left as it is (`tests/unit/test_fastpaths.py` notices).
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
