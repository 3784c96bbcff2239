"""A per-user cap on open SSE and AG-UI streams, so one user (or a leaked token) cannot hold every
concurrent execution of the stream function.

Each open stream holds a lease in Redis (`bus.key_names.stream_slots`); the relay renews it every heartbeat
and gives it back when the stream ends. A relay that dies without giving it back (a killed Lambda, a
crashed `pa dev`) holds it only until the lease lapses, one `lease_seconds` at most.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio

from personal_agent.bus import get_bus
from personal_agent.bus.base import BusUnavailable
from personal_agent.bus.key_names import stream_slots
from personal_agent.errors import RateLimited
from personal_agent.identity.principal import Principal
from personal_agent.settings import Settings, get_settings

# A lease outlives two missed renewals; the floor keeps a very short heartbeat from making it flap.
LEASE_FLOOR_SECONDS = 30.0

log = logging.getLogger(__name__)


def lease_seconds(settings: Settings) -> float:
    """How long a stream's slot stays taken without a renewal (renewed every heartbeat)."""
    return 2 * settings.sse_heartbeat_seconds + LEASE_FLOOR_SECONDS


def _now_ms() -> int:
    # Wall clock, not monotonic: the lease is compared across relay processes.
    return int(time.time() * 1000)


@dataclass(frozen=True)
class StreamSlot:
    """One open stream's lease."""

    key: str
    holder: str
    lease_ms: int
    renew_every: float


async def take_stream_slot(principal: Principal) -> StreamSlot:
    """Lease a slot for one more stream of this user, or raise 429 `too_many_streams` with `Retry-After`."""
    settings = get_settings()
    limit = settings.sse_max_connections_per_user
    slot = StreamSlot(
        key=stream_slots(principal.user_id),
        holder=uuid.uuid4().hex,
        lease_ms=int(lease_seconds(settings) * 1000),
        renew_every=settings.sse_heartbeat_seconds,
    )
    wait_ms = await get_bus().acquire_slot(slot.key, slot.holder, limit=limit, lease_ms=slot.lease_ms, now_ms=_now_ms())
    if wait_ms:
        raise RateLimited(
            f"you already have {limit} streams open (tabs, AG-UI clients); close one or try again later",
            code="too_many_streams",
            retry_after=max(1, math.ceil(wait_ms / 1000)),
            limit=limit,
        )
    return slot


async def release_stream_slot(slot: StreamSlot) -> None:
    """Give the slot back, even from a stream that is being cancelled (the client went away). A bus that does not
    answer keeps it until its lease lapses."""
    with anyio.CancelScope(shield=True):
        try:
            await get_bus().release_slot(slot.key, slot.holder)
        except BusUnavailable as exc:
            log.warning("a stream slot was not given back (%s); it lapses with its lease", exc)


async def holding_slot(slot: StreamSlot, frames: AsyncIterator[str]) -> AsyncIterator[str]:
    """Yield `frames` while holding `slot`: renewed at least every heartbeat, released when the stream ends. While
    the bus does not answer the stream goes on (the relay waits it out) and the renewal is tried at each frame."""
    try:
        renewed = time.monotonic()
        async for frame in frames:
            yield frame
            if time.monotonic() - renewed >= slot.renew_every:
                try:
                    await get_bus().renew_slot(slot.key, slot.holder, lease_ms=slot.lease_ms, now_ms=_now_ms())
                except BusUnavailable:
                    continue  # a lease outlives two heartbeats: the next frame tries again
                renewed = time.monotonic()
    finally:
        await release_stream_slot(slot)
