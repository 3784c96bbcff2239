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
from personal_agent.spec.sampling import in_sample

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
    """A headless run's result goes to its workflow's outputs; an evaluation's run moves its evaluation on; a run in
    its agent's online sample goes to its judge."""
    if _for_outputs(spec):
        await _send(spec, _pointer(queue.RUN_FINISHED, spec))
    if spec.trigger_source == "eval" and spec.parent_run_id is None:
        await _send(spec, _pointer(queue.EVAL_RUN_ENDED, spec))
    elif _sampled(spec, status):
        await _send(spec, _pointer(queue.SAMPLE_RUN, spec))


def _sampled(spec: RunSpec, status: str) -> bool:
    """A production run (not an evaluation's, not a sub-agent's) that answered, in its agent's online sample."""
    rate = spec.agent.sample_rate if spec.agent else 0.0
    ok = status == "succeeded" and spec.parent_run_id is None and spec.user_id is not None
    return ok and in_sample(spec.run_id, rate)


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
