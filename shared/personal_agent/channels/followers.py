"""One follower at a time answers a channel run's thread (`follow_store`). The launch's follower holds the thread from
the start and reads the run's stream for at most the relay's lifetime (`PA_SSE_MAX_LIFETIME_SECONDS`: a Lambda's
15 minutes). A run that goes on later (an approval decided in the channel or the web chat, a question answered)
gets a new follower from where the thread was answered, unless one still holds it; a follower that ends while the
run went on asks for another, so the answer of a late decision still lands in the thread."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.channels import follow_store, run_follow
from personal_agent.channels.config_store import ChannelKind
from personal_agent.channels.inbound import Replier
from personal_agent.db import org_transaction
from personal_agent.runs import store as run_store
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec

HOLD_MARGIN_SECONDS = 60.0
"""A follower's hold outlasts its lifetime by this much (its last posts); a follower that died lets go after it."""


def _hold_seconds() -> float:
    return get_settings().sse_max_lifetime_seconds + HOLD_MARGIN_SECONDS


async def _read(spec: RunSpec, replier: Replier, position: str | None) -> bool:
    """Answer the thread from `position`, then let go of it; whether another follower is needed (this one's lifetime
    ended before the run did, and the run went on meanwhile)."""
    cursor = run_follow.Cursor(position)
    try:
        outcome = await run_follow.answer(spec, replier, cursor)
    finally:
        async with org_transaction(spec.org_id) as conn:
            resumed = await follow_store.release(conn, spec.run_id, cursor.at)
    return outcome == "ended" and resumed


async def first(spec: RunSpec, kind: ChannelKind, reply: dict[str, Any], replier: Replier) -> bool:
    """Answer a run the channel just launched into its thread; whether another follower is needed."""
    async with org_transaction(spec.org_id) as conn:
        await follow_store.begin(conn, spec.org_id, spec.run_id, kind, reply, _hold_seconds())
    return await _read(spec, replier, None)


async def claim(org_id: UUID, run_id: UUID) -> tuple[follow_store.Follow, RunSpec] | None:
    """The thread of a run that went on, held for a new follower (None: another follower has it, or no run)."""
    async with org_transaction(org_id) as conn:
        follow = await follow_store.claim(conn, run_id, _hold_seconds())
        run = await run_store.get_run(conn, run_id) if follow is not None else None
    if follow is None or run is None:
        return None
    return follow, RunSpec.model_validate(run.spec)


async def again(spec: RunSpec, follow: follow_store.Follow, replier: Replier) -> bool:
    """Answer the claimed thread from where it was answered; whether another follower is needed."""
    return await _read(spec, replier, follow.position)


async def wanted(org_id: UUID, run_id: UUID) -> ChannelKind | None:
    """Note that a run went on (decided, answered); its channel when a follower should start for it now (None: not
    a channel's run, or a follower holds its thread and sees the rest, or asks for another when it ends)."""
    async with org_transaction(org_id) as conn:
        found = await follow_store.mark_resumed(conn, run_id)
    if found is None or found[1]:
        return None
    return found[0]
