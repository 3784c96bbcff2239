"""How long a run's text deltas gather before they go to the bus: `event_batch_ms`, widened while many runs of
this process stream at once.

Every batch costs the same wherever it is: a pipelined XADD round trip here, an XREAD and an SSE write on the
relay. One run alone fills a 5 ms window with dozens of deltas; 20 runs sharing one event loop each get a turn
only every few milliseconds, so the same window held two or three deltas and the cost per event rose with the
load. The window grows in proportion to the runs gathering deltas in this process (one run per process, as the
run worker Lambda has, keeps `event_batch_ms`), up to `MAX_WINDOW_SECONDS`: 20 runs streaming at once in one
`pa dev` send ten batches a second each (what that saved: `bench/PROFILE.md`). A reader then sees text in steps
of at most 0.1 s while the process is that busy, and as it comes when it is not.
"""

from __future__ import annotations

import weakref

SHARE = 1
"""Runs that may gather at once before the window widens (proportionally to their number)."""
MAX_WINDOW_SECONDS = 0.1

_gathering: weakref.WeakSet[object] = weakref.WeakSet()  # an emitter dropped with events held leaves by itself


def gathering(emitter: object) -> None:
    """`emitter` holds deltas that have not been sent."""
    _gathering.add(emitter)


def sent(emitter: object) -> None:
    """`emitter` handed what it held to the bus."""
    _gathering.discard(emitter)


def window(base_seconds: float) -> float:
    """The batch window now: `base_seconds`, times the gathering runs over `SHARE`, at most the larger of
    `MAX_WINDOW_SECONDS` and `base_seconds`."""
    widened = base_seconds * len(_gathering) / SHARE
    return min(max(base_seconds, widened), max(base_seconds, MAX_WINDOW_SECONDS))
