"""Follow-ups while a run is active (LangGraph's double-texting): what a message to a chat whose run has not ended
does, by the chat's `followup_policy`, the same for every way in (the web chat, the API, `/mcp`, webhooks, `/v1`):

- `reject`: 409 `run_in_progress` (the run's id in `details`), nothing stored;
- `enqueue` (the default): the message is stored in the chat's queue and answered 202 `followup_queued` (its
  `followup_id`, the `run_id` its run will have, its `position`); it starts its run when the active one ends, in
  order (`lifecycle/followup_starts.py`), and its sender may cancel it until then;
- `interrupt`: queued the same way, and the active run is stopped at its next safe point (it ends `cancelled`
  with what it had streamed stored), so the message is answered next, with that partial answer in the history.

The launch checks the chat in its own transaction (`claim_turn`) and refuses with `ChatBusy`; `enqueue` then stores
the message with the chat locked again, so a run that ended meanwhile lets the message start at once instead."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import Any
from uuid import UUID

from pydantic import TypeAdapter

from personal_agent.chats import followup_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import AppError, Conflict, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.run_views import stop_run
from personal_agent.outbox import announce as outbox
from personal_agent.runs import store as run_store

QUEUED_SOURCES = frozenset({"chat", "webhook", "schedule", "openai_api", "agui", "a2a", "slack", "telegram", "email"})
"""The ways in whose answer can say a message was queued: the API and its stream, `/mcp` and workflow triggers
(202 / `queued`), a background `/v1` response (status `queued`; a synchronous one is refused in `launch_run`), AG-UI
and A2A (the queued run's events once it starts: `stream/queued_runs.py`), and the channels (the thread is told, and
the run is answered into it once it starts). Sub-agents and evaluations never address a busy chat."""


class ChatBusy(Conflict):
    """A run of the chat is active (or messages wait before this one): the message follows the chat's policy."""

    def __init__(self, active: UUID | None) -> None:
        super().__init__(
            "a run is already in progress in this chat; wait for it to end or stop it",
            code="run_in_progress",
            run_id=str(active) if active else None,
        )


@dataclass(frozen=True)
class QueuedMessage:
    """A queued message and the launch request it was stored with (`LaunchRequest` as JSON)."""

    row: followup_store.FollowUpRow
    request: dict[str, Any]


class FollowUpQueued(AppError):
    """Not a failure: the message was accepted and waits for the chat's active run to end (202)."""

    status = 202

    def __init__(self, row: followup_store.FollowUpRow, position: int, policy: str) -> None:
        super().__init__(
            "the chat's run is still going: this message is queued and starts when it ends",
            code="followup_queued",
            followup_id=str(row.id),
            run_id=str(row.run_id),
            chat_id=str(row.chat_id),
            position=position,
            policy=policy,
        )


async def claim_turn(
    conn: Conn, chat_id: UUID, followup_id: UUID | None, continues_latest: bool, source: str = "chat"
) -> None:
    """In a launch's transaction, with the chat locked: go on when the chat is free (a queued follow-up's own
    launch marks it started here); else 409 `run_in_progress` (`reject`, a message that does not continue the
    latest turn or comes from a way in that cannot say "queued" yet, or a follow-up whose turn has not come) or
    `ChatBusy` (it will be queued)."""
    continues_latest = continues_latest and source in QUEUED_SOURCES
    active = await run_store.active_run_in_chat(conn, chat_id)
    if followup_id is not None:  # a queued message's turn: it waits while a run is active
        if active is not None:
            raise ChatBusy(active)
        if not await followup_store.mark_started(conn, followup_id):
            raise Conflict("this follow-up is no longer queued", code="followup_not_queued")
        return
    queue = await followup_store.lock_queue(conn, chat_id)
    waiting = queue.queued if queue else 0
    if active is None and (not waiting or not continues_latest):
        return
    if queue is None or queue.policy == "reject" or not continues_latest:
        if active is not None:
            raise Conflict(
                "a run is already in progress in this chat; wait for it to end or stop it",
                code="run_in_progress",
                run_id=str(active),
            )
        return
    raise ChatBusy(active)


async def enqueue(request: Any) -> None:
    """Queue the launch request's message with the run id it will have (raises `FollowUpQueued`), stopping the
    active run under `interrupt`; returns only when the chat became free meanwhile (the caller launches it now).
    `request`: a `lifecycle.launch.LaunchRequest`, stored as its JSON (`followup_starts` reads it back)."""
    request = replace(request, run_id=request.run_id or uuid.uuid4())
    org_id, chat_id, user_id = request.org_id, request.chat_id, request.user_id
    stored = TypeAdapter(type(request)).dump_python(request, mode="json")
    async with org_transaction(org_id) as conn:
        queue = await followup_store.lock_queue(conn, chat_id)
        if queue is None:
            raise NotFound("chat not found", code="chat_not_found")
        active = await run_store.active_run_in_chat(conn, chat_id)
        if active is None and not queue.queued:
            return
        row = await followup_store.add(
            conn, org_id, chat_id, user_id, request.run_id, request.message, stored, request.trigger_source
        )
        running = await run_store.get_run(conn, active) if active else None
    if running is None:  # the chat is free but others wait: the queue starts now, this message last
        await outbox.followups_waiting(org_id, chat_id)
    elif queue.policy == "interrupt":
        await stop_run(org_id, running)
    raise FollowUpQueued(row, queue.queued + 1, queue.policy)


async def queued(principal: Principal, chat_id: UUID) -> list[followup_store.FollowUpRow]:
    """The caller's chat's queued follow-ups, in the order they will start."""
    async with org_transaction(principal.org_id) as conn:
        await _own_chat(conn, principal, chat_id)
        return await followup_store.queued_of(conn, chat_id)


async def cancel(principal: Principal, chat_id: UUID, followup_id: UUID) -> followup_store.FollowUpRow:
    """Cancel the caller's queued follow-up: it never starts. 409 `followup_not_queued` once it started."""
    async with org_transaction(principal.org_id) as conn:
        await _own_chat(conn, principal, chat_id)
        if principal.user_id is not None:
            cancelled = await followup_store.cancel(conn, followup_id, chat_id, principal.user_id)
            if cancelled is not None:
                return cancelled
        row = await followup_store.get(conn, followup_id, chat_id)
    if row is None or row.user_id != principal.user_id:
        raise NotFound("follow-up not found", code="followup_not_found")
    raise Conflict(f"this follow-up is already {row.status}", code="followup_not_queued", followup_status=row.status)


async def of_run(principal: Principal, run_id: UUID, source: str) -> QueuedMessage | None:
    """The caller's message from `source` that was queued to start as `run_id` (whatever became of it), if any."""
    async with org_transaction(principal.org_id) as conn:
        found = await followup_store.by_run(conn, run_id)
    if found is None or found[0].user_id != principal.user_id or found[0].source != source:
        return None
    return QueuedMessage(*found)


async def dropped(org_id: UUID, chat_id: UUID, followup_id: UUID) -> AppError | None:
    """Why a queued message will never start (it was cancelled, or its launch was refused for good: that error);
    None while it waits or once it started."""
    async with org_transaction(org_id) as conn:
        row = await followup_store.get(conn, followup_id, chat_id)
    if row is None or row.status == "cancelled":
        return Conflict("this message was cancelled before it started", code="followup_cancelled")
    if row.status == "failed":
        error = row.error or {}
        return Conflict(str(error.get("message") or "this message could not start"), code=error.get("code", "failed"))
    return None


async def _own_chat(conn: Conn, principal: Principal, chat_id: UUID) -> None:
    if principal.user_id is None or await chat_store.get_owned(conn, chat_id, principal.user_id) is None:
        raise NotFound("chat not found", code="chat_not_found")


async def policy(principal: Principal, chat_id: UUID, new: followup_store.Policy | None = None) -> str:
    """The caller's chat's follow-up policy, after setting it to `new` when given."""
    async with org_transaction(principal.org_id) as conn:
        await _own_chat(conn, principal, chat_id)
        assert principal.user_id is not None  # `_own_chat` found the chat theirs
        if new is not None:
            await chat_store.set_followup_policy(conn, chat_id, principal.user_id, new)
        current = await chat_store.followup_policy(conn, chat_id, principal.user_id)
    return current or "enqueue"
