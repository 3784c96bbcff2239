"""Storing a parent's children, running them and going on when they ended: a round's children are stored through
the launch chokepoint once the parent checkpointed; inline children run as tasks in the worker (at most
`PA_SUBAGENT_CONCURRENCY` at once), durable ones as their own executions while the parent's waits on a task
token; the last child to end resumes its parent, once. Cancelling a run cancels every run below it; a child
stopped by a budget stops its whole tree."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.engine.cancellation import signal_cancel
from personal_agent.lifecycle import executions
from personal_agent.lifecycle.stored_runs import store_prepared
from personal_agent.runs import store
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec


async def store_children(org_id: UUID, parent_id: UUID, children: Sequence[RunSpec]) -> bool:
    """Store the children of the parent's round that are not stored yet, and the parent waits for them; each one
    stored is announced on the parent's stream (`subagent_started`). A round handed back again (the parent resumed
    after its driver died between its checkpoint and this) stores only what is missing, so never a child twice.
    A parent cancelled (or ended) meanwhile gets none and ends here: False."""
    from ag_ui.core import CustomEvent  # ag-ui and the engine: not in the API's cold start

    from personal_agent.engine import subagent_events
    from personal_agent.engine.runner import end_idle_run

    async with org_transaction(org_id) as conn:
        parent = await store.lock_run(conn, parent_id)
        going_on = not store.cancelled_or_ended(parent)
        stored = [child for child in children if going_on and await store.get_run(conn, child.run_id) is None]
        for child in stored:
            await store_prepared(conn, child)
        if going_on:
            await store.mark_waiting(conn, parent_id)
    if not going_on:
        await end_idle_run(parent_id, org_id, "cancelled")  # nothing when it had ended
        return False
    if stored:
        await subagent_events.stream_of(stored[0], parent_id).emit(
            *(CustomEvent(name="subagent_started", value=subagent_events.started_value(c)) for c in stored)
        )
    return True


async def drive_children_inline(child_ids: list[str], drive: Callable[[UUID], Awaitable[Any]]) -> None:
    """Drive the children of one round in this worker, a bounded number at a time."""
    gate = asyncio.Semaphore(get_settings().subagent_concurrency)

    async def one(child_id: str) -> None:
        async with gate:
            await drive(UUID(child_id))

    await asyncio.gather(*(one(c) for c in child_ids))


async def child_ended(org_id: UUID, run_id: UUID, *, resume_inline: bool) -> list[RunSpec]:
    """After a run's drive: if it is a child that ended, stop its tree when a budget stopped it, else resume its
    parent when it was the last of its round. Returns the inline parents to drive again (`resume_inline` off:
    none, the parent's own drive goes on by itself); a durable parent goes on here, through its Task's token."""
    async with org_transaction(org_id) as conn:
        row = await store.get_run(conn, run_id)
    if row is None or row.parent_run_id is None or row.status not in store.TERMINAL:
        return []
    again: list[RunSpec] = []
    if (row.error or {}).get("code") == "budget_exceeded":
        root = RunSpec.model_validate(row.spec).root_run_id or row.parent_run_id
        again += await stop_tree(org_id, root, resume_inline=resume_inline)
    if resume_inline or row.mode == "durable":
        again += await resume_parent_if_done(org_id, row.parent_run_id, resume_inline=resume_inline)
    return again


async def resume_parent_if_done(org_id: UUID, parent_id: UUID, *, resume_inline: bool) -> list[RunSpec]:
    """When every child of the parent's round has ended, continue the parent (once): a durable one through its
    Task's token here; an inline one is returned, for its driver to drive again (when `resume_inline`)."""
    async with org_transaction(org_id) as conn:
        parent = await store.lock_run(conn, parent_id)
        cp = await store.latest_checkpoint(conn, parent_id)
        if parent is None or parent.status != "waiting" or cp is None or cp.kind != "awaiting_children":
            return []
        ids = [str(c) for c in cp.state.get("children", [])]
        rows = await store.round_children(conn, parent_id, ids)
        if len(rows) < len(ids) or any(r.status not in store.TERMINAL for r in rows):
            return []
        token = None
        if parent.mode == "durable":
            token = await store.take_children_token(conn, parent_id)
            if not token:  # its Task has not stored its token yet: it resumes the parent itself when it does
                return []
        elif not resume_inline:
            return []
        await store.resume_waiting(conn, parent_id)
    if token:
        await executions.send_task_success(token, parent_id, org_id)
        return []
    return [RunSpec.model_validate(parent.spec)]


async def await_children(org_id: UUID, run_id: UUID, token: str) -> None:
    """The durable parent's `WaitForChildren` Task: store its token, start the children's executions (named
    after the runs: a retried Task starts none twice), and resume at once if they all ended already."""
    rows: list[store.RunRow | None] = []
    async with org_transaction(org_id) as conn:
        cancelled = store.cancelled_or_ended(await store.lock_run(conn, run_id))
        if not cancelled:
            await store.set_children_token(conn, run_id, token)
            cp = await store.latest_checkpoint(conn, run_id)
            ids = [str(c) for c in cp.state.get("children", [])] if cp and cp.kind == "awaiting_children" else []
            rows = [await store.get_run(conn, c) for c in ids]
    if cancelled:  # the cancel took the tokens stored before it; this one was not stored yet
        await executions.release_cancelled_wait(token)
        return
    for row in rows:
        if row is not None and row.status == "queued" and not row.execution_arn:
            await executions.start_execution(RunSpec.model_validate(row.spec))
    await resume_parent_if_done(org_id, run_id, resume_inline=False)


async def cancel_descendants(org_id: UUID, run_id: UUID) -> int:
    """Cancel every unfinished run below `run_id`: set their cancel flags (a running engine stops between stream
    chunks), stop their executions, and end the ones nobody advances."""
    from personal_agent.engine.runner import end_idle_run  # pydantic-ai: not in the API's cold start

    async with org_transaction(org_id) as conn:
        rows = await store.unfinished_descendants(conn, run_id)
        for row in rows:
            await store.request_cancel(conn, row.id)
    for row in rows:
        await signal_cancel(row.id)  # at once here, within 0.25 s elsewhere
        if row.mode == "durable" and row.execution_arn:
            await executions.stop_execution(org_id, row.id, row.execution_arn)
    for row in rows:
        if row.status in ("waiting", "queued"):
            await end_idle_run(row.id, org_id, "cancelled")
    return len(rows)


async def stop_tree(org_id: UUID, root_id: UUID, *, resume_inline: bool) -> list[RunSpec]:
    """A budget stop: every run below the root stops (running ones between stream chunks; ones waiting for a
    person or not started yet at once). Runs waiting on children resume when those ended and, seeing a child
    stopped by the budget, end `failed` themselves, up to the root: every stream ends in order."""
    from personal_agent.engine.runner import end_idle_run  # pydantic-ai: not in the API's cold start

    async with org_transaction(org_id) as conn:
        rows = await store.unfinished_descendants(conn, root_id)
        idle = []
        for row in rows:
            await store.request_cancel(conn, row.id)
            cp = await store.latest_checkpoint(conn, row.id) if row.status == "waiting" else None
            if row.status == "queued" or (cp is not None and cp.kind != "awaiting_children"):
                idle.append(row)
    for row in rows:
        await signal_cancel(row.id)  # at once here, within 0.25 s elsewhere
    for row in idle:
        await end_idle_run(row.id, org_id, "cancelled")
    again: list[RunSpec] = []
    for parent_id in {row.parent_run_id for row in idle}:  # their parents' rounds may be over now
        again += await resume_parent_if_done(org_id, parent_id, resume_inline=resume_inline)
    return again
