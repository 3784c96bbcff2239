"""What the engine tells the world about a run: once when it ends, once when it pauses for approval. Each queues
pointers for the deliver function (a headless run's workflow outputs, the owner's push subscriptions); a queue that
refuses a message is logged, never a reason to fail the run."""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from personal_agent.outbox import queue
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger("personal_agent.outbox")
HEADLESS = ("webhook", "schedule")  # runs nobody watches: their workflow's outputs tell their owner


def _pointer(kind: str, spec: RunSpec, **more: Any) -> dict[str, Any]:
    return {"type": kind, "org_id": str(spec.org_id), "run_id": str(spec.run_id), **more}


def _for_outputs(spec: RunSpec) -> bool:
    return spec.trigger_source in HEADLESS and spec.parent_run_id is None


async def _send(spec: RunSpec, message: dict[str, Any]) -> None:
    if not get_settings().output_queue_url:
        return
    try:
        await queue.enqueue(message)
    except Exception:
        log.warning(
            "a %s message could not be queued", message["type"], extra={"run_id": str(spec.run_id)}, exc_info=True
        )


async def run_ended(spec: RunSpec, status: str) -> None:
    """A headless run's result goes to its workflow's outputs."""
    if _for_outputs(spec):
        await _send(spec, _pointer(queue.RUN_FINISHED, spec))


async def followups_waiting(org_id: UUID, chat_id: UUID) -> None:
    """A chat's run ended (or its queue stalled) with follow-ups queued: the oldest starts its run."""
    message = {"type": queue.START_FOLLOWUPS, "org_id": str(org_id), "chat_id": str(chat_id)}
    if not get_settings().output_queue_url:
        log.warning("no outputs queue: the chat's queued messages wait", extra={"chat_id": str(chat_id)})
        return
    try:
        await queue.enqueue(message)
    except Exception:
        log.warning("a start_followups message could not be queued", extra={"chat_id": str(chat_id)}, exc_info=True)


async def run_paused(spec: RunSpec, approval_ids: list[str]) -> None:
    """A headless run's owner hears of its approvals through its outputs, and every owner on the browsers they
    subscribed (when push is set up)."""
    if not approval_ids:
        return
    if _for_outputs(spec):
        await _send(spec, _pointer(queue.APPROVAL_REQUESTED, spec, approval_ids=approval_ids))
    if get_settings().vapid_public_key:
        await _send(spec, _pointer(queue.PUSH_APPROVALS, spec, approval_ids=approval_ids))
