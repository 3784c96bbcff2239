"""A durable run's one trace across its steps (issue 37 item 5). Each Task of the state machine runs in its own
Lambda invocation (another process), so the run's root span cannot be held open: its ids are chosen at launch
(`otel_export.begin_run_trace`), travel as the W3C `traceparent` in the execution's input and every Task's payload,
each step is a `step {action}` span under it (the engine's `invoke_agent`, `chat`, `execute_tool` and gate spans
under that), and the step that ends the run exports the root span itself, from the run's launch to its end.

A sub-agent's execution carries its parent's step as its `traceparent`: its steps join the parent's trace, and only
the top run exports a root. With traces off (`PA_OTEL_ENDPOINT` unset) all of this is a no-op."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from personal_agent import otel_export
from personal_agent.db import org_transaction
from personal_agent.runs import store
from personal_agent.runtime import run_sync

log = logging.getLogger("personal_agent.durable")

ENDED = {"succeeded", "failed", "cancelled"}


@contextmanager
def step_span(event: dict[str, Any]) -> Iterator[None]:
    """The Task's span under the run's root (its payload's `traceparent`), then the root itself when the Task ended the
    run. Whatever was recorded is sent before the invocation returns (Lambda freezes the process after)."""
    parent = str(event.get("traceparent") or "")
    if not parent or not otel_export.enabled():
        yield
        return
    action = str(event.get("action"))
    attributes = {"pa.run_id": str(event.get("run_id")), "pa.step.action": action}
    try:
        with otel_export.child_of(parent, f"step {action}", attributes):
            yield
    finally:
        otel_export.flush()


def step_ended(event: dict[str, Any], result: dict[str, Any]) -> None:
    """After a Task: when it ended a top-level run, export the run's root span (its launch to now). A trace that
    cannot be sent is logged, never the step's failure."""
    parent = str(event.get("traceparent") or "")
    status = str(result.get("status"))
    if not parent or status not in ENDED or not otel_export.enabled():
        return
    try:
        _emit_root(parent, UUID(str(event["run_id"])), UUID(str(event["org_id"])), status)
    except Exception:
        log.warning("the durable run's root span was not exported", exc_info=True)


def _emit_root(parent: str, run_id: UUID, org_id: UUID, status: str) -> None:
    row = run_sync(_run_row(run_id, org_id))
    if row is None or row.parent_run_id is not None:
        return  # a sub-agent's steps are under its parent's step; the top run's root covers them
    attributes = {"pa.run_id": str(run_id), "pa.run.mode": "durable", "pa.run.status": status}
    if row.chat_id is not None:
        attributes["gen_ai.conversation.id"] = str(row.chat_id)
    if row.spec.get("agent"):
        attributes["gen_ai.agent.name"] = str(row.spec["agent"].get("slug"))
    start_ns = int(row.created_at.timestamp() * 1_000_000_000)
    otel_export.emit_run_root(parent, "run", start_ns, attributes, "the run failed" if status == "failed" else None)
    otel_export.flush()


async def _run_row(run_id: UUID, org_id: UUID) -> store.RunRow | None:
    async with org_transaction(org_id) as conn:
        return await store.get_run(conn, run_id)
