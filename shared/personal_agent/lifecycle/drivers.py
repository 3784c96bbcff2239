"""The run drivers: hand a stored run to inline (a task here, or the run worker Lambda) or durable (Step
Functions), drive an inline run under its lease, resume a run whose wait for a person ended, and stop one.
How a run is started, resumed or stopped depends on its mode here, and nowhere else.

Where an inline run is driven: a task here in local mode (`PA_INLINE_DRIVER=auto`); the run worker Lambda on AWS;
a task of the stream function answering a request that streams its events (`streamed_here`,
`PA_STREAM_DRIVES_RUNS`): one Lambda per streamed turn. Such a drive is not the request's: a client that goes away
does not stop it, the response waits for its end (on Lambda, the invocation keeps its process running), and a
drive whose process froze or died loses its lease and is resumed by recovery like a run worker's."""

from __future__ import annotations

import asyncio
import contextvars
import importlib.util
import json
import logging
import uuid
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.bus import key_names, local_writes
from personal_agent.db import org_transaction
from personal_agent.engine.cancellation import signal_cancel
from personal_agent.errors import Conflict, dependency_outage
from personal_agent.lifecycle import child_runs as subagents
from personal_agent.lifecycle import executions, local_drives
from personal_agent.lifecycle.lease import Leased, LeaseLost, RunLease, local_owner
from personal_agent.lifecycle.local_drives import task_name
from personal_agent.runs import store
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunMode, RunSpec

log = logging.getLogger("personal_agent.runs")
PAUSED = "paused"
"""What `drive` returns for a run it stopped while the bus or database stayed out: `running`, unleased, resumed by
recovery (`lifecycle/recovery.py`) from its last checkpoint."""
_streamed_here: contextvars.ContextVar[bool] = contextvars.ContextVar("pa_streamed_here", default=False)


def ensure_driver_available(mode: RunMode) -> None:
    """Refuse a durable run early (409) when no state machine is configured."""
    if mode == "durable" and not get_settings().state_machine_arn:
        raise Conflict("durable runs are not available: no state machine is configured", code="durable_unavailable")


async def drive(
    run_id: UUID,
    org_id: UUID,
    owner: str | None = None,
    *,
    under_parent: bool = False,
    leased: Leased | None = None,
    reraise: bool = False,
) -> str:
    """The one inline drive (a task here, a sub-agent under its parent's drive, the run worker Lambda): drive the
    run to its end under a lease, from its last checkpoint, so a run whose worker died resumes without asking for a
    stored response again; once `run_max_attempts` drives in a row died, it ends failed (`worker_lost`). A crash
    marks the run failed, never leaves it running (and raises again with `reraise`); an outage of the bus or the
    database past `PA_DEPENDENCY_RETRY_SECONDS` pauses it instead (`PAUSED`). Returns the status it reached, or
    `leased` when another worker drives it (or it is not drivable: ended, or waiting for a person).
    `owner`: the lease owner (default: this process); `leased`: the run was stored already leased to this process
    (`Leased`); `under_parent`: a sub-agent driven by its parent's drive, which goes on by itself afterwards."""
    from personal_agent.engine.runner import fail_run  # pydantic-ai: not in the API's cold start

    taken: list[store.RunRow] = []  # the run's row once its lease is taken
    status = "failed"
    try:
        if leased is not None:
            status = await _drive_leased(run_id, org_id, leased.owner, taken, leased.row)
        else:
            status = await _drive_leased(run_id, org_id, owner or local_owner(), taken, None)
    except Exception as exc:
        outage = dependency_outage(exc)
        if outage is None:
            log.exception("inline run failed", extra={"run_id": str(run_id)})
            await fail_run(run_id, org_id, "internal_error", f"the run failed: {type(exc).__name__}")
        else:  # never failed for an outage: its lease is released, and recovery resumes it from its checkpoint
            log.warning("the %s is unavailable: the run is paused", outage.dependency, extra={"run_id": str(run_id)})
            status = PAUSED
        if reraise:  # the run worker Lambda: its retry (a minute later) resumes a paused run
            if outage is not None and outage is not exc:
                raise outage from exc  # its error type names the outage
            raise
    finally:
        # A run whose row says it has no parent is nobody's child; a paused run has not ended.
        if (not taken or taken[0].parent_run_id is not None) and status != PAUSED:
            await after_drive(org_id, run_id, resume_inline_parent=not under_parent)
    return status


async def after_drive(org_id: UUID, run_id: UUID, *, resume_inline_parent: bool) -> None:
    """The one place after any drive (inline, a durable step, a cancel): a sub-agent that ended stops its tree when
    a budget stopped it, and resumes its waiting parent when it was the last of its round. An inline parent gets a
    new drive here unless `resume_inline_parent` is off (its own drive, or no inline driver, goes on by itself)."""
    for parent in await subagents.child_ended(org_id, run_id, resume_inline=resume_inline_parent):
        await start_run(parent)


async def _drive_children(org_id: UUID, children: list[str]) -> None:
    """The sub-agents of one round, as tasks in this worker (`subagents.drive_children_inline` bounds them)."""

    async def drive_child(child_id: UUID) -> None:
        await drive(child_id, org_id, under_parent=True)

    await subagents.drive_children_inline(children, drive_child)


async def _drive_leased(
    run_id: UUID, org_id: UUID, owner: str, taken_row: list[store.RunRow], leased_row: store.RunRow | None
) -> str:
    """`taken_row` gets the run's row once the lease is taken (or `leased_row`, when the run was stored leased)."""
    from personal_agent.engine.runner import advance, fail_run  # pydantic-ai: not in the API's cold start

    settings = get_settings()
    lease = RunLease(run_id, org_id, owner, settings.run_lease_seconds)
    taken = leased_row if leased_row is not None else await lease.take()
    if taken is None:
        return "leased"
    taken_row.append(taken)
    attempts = taken.attempts
    paused = False
    try:
        if attempts > settings.run_max_attempts:
            await fail_run(
                run_id,
                org_id,
                "worker_lost",
                f"the run's worker stopped {attempts - 1} times before the run finished; it is not retried again",
            )
            return "failed"
        if attempts > 1:
            await _announce_resumed(run_id, org_id, attempts)
        outcome = await lease.hold(advance(run_id, org_id, row=taken))  # the row as the lease took it: no re-read
        while outcome.status == "delegating":
            # Its sub-agents are stored (any not stored yet) and run here; the run goes on once they all ended (if
            # one waits for a person, the run waits too, and the child that ends last resumes it).
            if not await lease.hold(subagents.store_children(org_id, run_id, outcome.children)):
                return "cancelled"
            await lease.hold(_drive_children(org_id, outcome.child_ids))
            again = await lease.hold(advance(run_id, org_id))
            if again.status == "delegating" and again.child_ids == outcome.child_ids:
                return "waiting"
            outcome = again
        return outcome.status
    except LeaseLost:
        log.warning("another worker took over the run", extra={"run_id": str(run_id)})
        return "leased"
    except Exception as exc:
        paused = dependency_outage(exc) is not None
        raise
    finally:
        await lease.release(paused=paused)


async def _announce_resumed(run_id: UUID, org_id: UUID, attempt: int) -> None:
    """Tell the run's stream that it goes on after a lost worker (what came since its checkpoint comes again)."""
    from ag_ui.core import CustomEvent  # ag-ui is not in the API's cold start (the API imports this module)

    from personal_agent.engine.emitter import RunEmitter  # ag-ui, as above

    async with org_transaction(org_id) as conn:
        row = await store.get_run(conn, run_id)
    if row is not None and row.status == "running":  # before RUN_STARTED there is nothing to resume
        spec = RunSpec.model_validate(row.spec)
        await RunEmitter(spec).emit(CustomEvent(name="run_resumed", value={"run_id": str(run_id), "attempt": attempt}))


def invocation_owner(request_id: str) -> str:
    """The lease owner of one run worker invocation (the on-failure destination knows its dead attempts by it)."""
    return f"lambda:{request_id}:{uuid.uuid4().hex[:8]}"


async def run_invocation(run_id: UUID, org_id: UUID, request_id: str) -> dict[str, Any]:
    """The run worker Lambda: drive the run under a lease until it ends (no time budget); a crash marks it failed.
    An invocation that died (timeout, out of memory) is retried by Lambda and resumes from the last checkpoint
    once its lease expired; `personal_agent.lifecycle.recovery.fail_lost_invocation` ends it after the last retry."""
    status = await drive(run_id, org_id, invocation_owner(request_id), reraise=True)
    return {"run_id": str(run_id), "status": status}


async def cancel_invocation(run_id: UUID, org_id: UUID, cancel: dict[str, Any]) -> dict[str, Any]:
    """The run worker Lambda, asked by the API function to finish a cancel (`finish_cancel`)."""
    await finish_cancel(org_id, run_id, idle=bool(cancel.get("idle")), sub_agent=bool(cancel.get("sub_agent")))
    return {"run_id": str(run_id), "status": "cancelled"}


def inline_in_process() -> bool:
    """Whether this process drives every inline run it starts (local mode, unless `PA_INLINE_DRIVER=worker`)."""
    settings = get_settings()
    return settings.is_local and settings.inline_driver == "auto"


@contextmanager
def streamed_here() -> Iterator[bool]:
    """Inside: an inline run launched is driven by this process, which answers the request with its events (when
    `PA_STREAM_DRIVES_RUNS` is on and this process has the engine). Yields whether it is."""
    here = get_settings().stream_drives_runs and has_engine()
    token = _streamed_here.set(here)
    try:
        yield here
    finally:
        _streamed_here.reset(token)


def stream_owner() -> str:
    """The lease owner of a drive by the stream function answering its request (recovery waits for its lease)."""
    return f"stream:{uuid.uuid4().hex[:12]}"


def drives_here(spec: RunSpec) -> str | None:
    """The lease owner to store a new run with when this process drives it as soon as it is stored (an inline run
    in local mode, or streamed here: `start_run` makes it a task here), so its first drive needs no lease
    transaction; else None."""
    if spec.mode != "inline":
        return None
    if inline_in_process():
        return local_owner()
    return stream_owner() if _streamed_here.get() else None


async def start_run(spec: RunSpec, leased: Leased | None = None) -> None:
    """Hand a stored run to its driver (`leased`: stored already leased to this process's driver)."""
    if spec.mode == "durable":
        await executions.start_execution(spec)
    elif leased is not None or inline_in_process():
        run = drive(spec.run_id, spec.org_id, leased=leased)
        if _streamed_here.get():
            run = _relayed_here(spec, run)
        context = contextvars.copy_context()
        context.run(_streamed_here.set, False)  # what this drive launches (a follow-up) is not the response's
        local_drives.track(asyncio.get_running_loop().create_task(run, name=task_name(spec.run_id), context=context))
    else:
        await asyncio.to_thread(_invoke_worker, spec)


async def _relayed_here(spec: RunSpec, run: Coroutine[Any, Any, str]) -> str:
    """A drive whose relay is here: it takes each batch as written, not by an XREAD (`bus.local_writes`)."""
    with local_writes.writing(key_names.run_stream(spec.org_id, spec.run_id)):
        return await run


def _invoke_worker(spec: RunSpec) -> None:
    invoke_worker({"run_id": str(spec.run_id), "org_id": str(spec.org_id)})


def invoke_worker(payload: dict[str, Any]) -> None:
    """An asynchronous invocation of the run worker Lambda."""
    aws_client("lambda").invoke(
        FunctionName=get_settings().run_worker_function, InvocationType="Event", Payload=json.dumps(payload).encode()
    )


def has_engine() -> bool:
    """Whether this process can run the engine: the API function's layer leaves pydantic-ai out."""
    return importlib.util.find_spec("pydantic_ai") is not None


async def finish_cancel(org_id: UUID, run_id: UUID, *, idle: bool, sub_agent: bool) -> None:
    """The rest of a cancel once the flag is set and the driver stopped: end the run when nobody advances it (it
    waits for a person, or never started), cancel every run below it, and give a cancelled sub-agent's parent its
    answer. It needs the engine: done here when this process has it, else by the run worker (the API function)."""
    if not has_engine():
        cancel = {"idle": idle, "sub_agent": sub_agent}
        await asyncio.to_thread(invoke_worker, {"run_id": str(run_id), "org_id": str(org_id), "cancel": cancel})
        return
    if idle:
        from personal_agent.engine.runner import end_idle_run

        await end_idle_run(run_id, org_id, "cancelled", once=True)  # its engine may end it too
    await subagents.cancel_descendants(org_id, run_id)  # every run below it stops too
    if sub_agent:  # a sub-agent cancelled alone: its parent gets the cancel as its answer
        await after_drive(org_id, run_id, resume_inline_parent=True)


def can_resume(mode: RunMode, task_token: str | None) -> bool:
    """Whether a run whose wait ended can go on now: a durable run only through the token of the Task waiting on
    it (until that Task stored its token, it resumes the run itself when it does)."""
    return mode == "inline" or bool(task_token)


async def resume(spec: RunSpec, task_token: str | None = None) -> None:
    """Continue a run whose wait for a person ended: the durable Task waiting on `task_token` goes on, an inline
    run gets a new drive (which continues from its checkpoint)."""
    if spec.mode == "durable":
        assert task_token, "a durable run resumes through its waiting Task"
        await executions.send_task_success(task_token, spec.run_id, spec.org_id)
    else:
        await start_run(spec)


async def stop(org_id: UUID, run_id: UUID, mode: str, execution_arn: str | None) -> None:
    """Stop whatever drives the run (its cancel flag is already set): an inline drive in this process at once,
    a durable run's execution and its waiting Tasks."""
    await signal_cancel(run_id)  # here at once; in another process at its next check
    if mode == "durable" and execution_arn:
        await executions.stop_execution(org_id, run_id, execution_arn)
