"""Starting a chat's queued follow-ups (`lifecycle/followup_queue.py`) when its run ended: the deliver function
gets the outbox's `start_followups` pointer (sent by the run's end when messages wait) and launches the oldest
through the one launch chokepoint, as its sender would have, so everything a launch checks (budget, tiers, models)
is checked now, against the chat as the ended run left it. The launch marks the follow-up started in the
transaction that stores its run; a launch refused for good (a budget, a model no longer allowed) marks it failed
and the next one is tried. A chat busy again (another message got in first) leaves the queue to that run's end."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any
from uuid import UUID

from pydantic import TypeAdapter, ValidationError

from personal_agent.chats import followup_store
from personal_agent.db import org_transaction
from personal_agent.errors import AppError, Conflict
from personal_agent.lifecycle.launch import LaunchRequest, launch_run

log = logging.getLogger("personal_agent.followups")
_REQUEST = TypeAdapter(LaunchRequest)
MAX_STARTS = 20  # a queue of refused launches ends here; the next run's end goes on with the rest


async def start_next(org_id: UUID, message: dict[str, Any]) -> str | None:
    """Launch the chat's oldest queued follow-up (the outbox's `start_followups` message); the run id it started,
    or None (nothing queued, or the chat is busy again)."""
    chat_id = UUID(str(message["chat_id"]))
    for _ in range(MAX_STARTS):
        async with org_transaction(org_id) as conn:
            head = await followup_store.next_queued(conn, chat_id)
        if head is None:
            return None
        try:
            request = _REQUEST.validate_python(head.request)
            spec = await launch_run(replace(request, followup_id=head.id))
        except Conflict as exc:
            if exc.code == "run_in_progress":
                return None  # the chat is busy again: that run's end goes on with the queue
            if exc.code != "followup_not_queued":  # (cancelled or started meanwhile: the next one)
                await _failed(org_id, head.id, exc)
        except (AppError, ValidationError) as exc:
            await _failed(org_id, head.id, exc)
        else:
            return str(spec.run_id)
    return None


async def _failed(org_id: UUID, followup_id: UUID, exc: Exception) -> None:
    log.warning("a queued message could not start", extra={"followup_id": str(followup_id)})
    error = {"code": getattr(exc, "code", "invalid_request"), "message": str(exc)[:500]}
    async with org_transaction(org_id) as conn:
        await followup_store.mark_failed(conn, followup_id, error)
