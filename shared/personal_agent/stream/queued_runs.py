"""A message queued behind its chat's active run (`lifecycle/followup_queue.py`), followed as if its run had started
at once by the ways in that answer with the run itself (AG-UI, A2A, a background `/v1` response's stream, a channel's
thread): the run's id is known when the message is queued, so its events are read from its stream as soon as it
starts, with heartbeats meanwhile. When the message is cancelled or cannot start first (its launch refused for
good), a RUN_ERROR says so (code `followup_cancelled`, or the launch's own code) and the stream ends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from uuid import UUID

from ag_ui.core import RunErrorEvent

from personal_agent.bus.key_names import run_stream
from personal_agent.engine.emitter import encode
from personal_agent.errors import AppError, Conflict
from personal_agent.lifecycle import followup_queue
from personal_agent.lifecycle.followup_queue import FollowUpQueued
from personal_agent.settings import get_settings
from personal_agent.stream.relay import relay, sse


@dataclass(frozen=True)
class Queued:
    """A queued message as its sender follows it: the run it will start and where it waits."""

    org_id: UUID
    chat_id: UUID
    followup_id: UUID
    run_id: UUID
    position: int

    @classmethod
    def of(cls, org_id: UUID, queued: FollowUpQueued) -> Queued:
        details = queued.details
        return cls(
            org_id,
            UUID(str(details["chat_id"])),
            UUID(str(details["followup_id"])),
            UUID(str(details["run_id"])),
            int(details["position"]),
        )


async def _not_gone() -> bool:
    return False  # a run that will start: its stream will be written


def _relayed(queued: Queued, lifetime: float) -> AsyncIterator[str]:
    settings = get_settings()
    return relay(
        run_stream(queued.org_id, queued.run_id),
        None,
        heartbeat=settings.sse_heartbeat_seconds,
        max_lifetime=lifetime,
        is_gone=_not_gone,
    )


async def waiting(queued: Queued) -> AsyncIterator[str]:
    """Heartbeats until the queued message's run wrote its first event; raises why it never will when the message is
    dropped first (`followup_queue.dropped`, checked at each heartbeat), or `still_queued` (409) when the stream's
    lifetime passes first (it starts later: its answer is in the chat)."""
    stream = _relayed(queued, get_settings().sse_max_lifetime_seconds)
    try:
        async for chunk in stream:
            if not chunk.startswith(":"):
                return
            dropped = await followup_queue.dropped(queued.org_id, queued.chat_id, queued.followup_id)
            if dropped is not None:
                raise dropped
            yield ": ping\n\n"
    finally:
        await _close(stream)
    raise Conflict("the message is still queued: its answer will be in the chat", code="still_queued")


async def frames(queued: Queued) -> AsyncIterator[str]:
    """The SSE frames of the queued message's run from its first event to its terminal one, heartbeats while it
    waits; a RUN_ERROR instead when it does not start (`waiting`)."""
    try:
        async for ping in waiting(queued):
            yield ping
    except AppError as dropped:
        yield sse(None, encode(RunErrorEvent(message=dropped.message, code=dropped.code)))
        return
    stream = _relayed(queued, get_settings().sse_max_lifetime_seconds)
    try:
        async for chunk in stream:
            yield chunk
    finally:
        await _close(stream)


async def _close(stream: AsyncIterator[str]) -> None:
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()
