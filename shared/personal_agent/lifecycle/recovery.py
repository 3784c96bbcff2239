"""Inline runs whose worker died: hand them back to their driver, which resumes each from its last checkpoint
(a stored model response is never requested again) or, once `run_max_attempts` drives in a row died, ends it
failed with code `worker_lost` — through the engine's end path, so the stream gets a RUN_ERROR.

Where it runs:
- `pa dev`: `RecoveryLoop` sweeps once at start and then every `PA_RUN_RECOVERY_INTERVAL_SECONDS`. A lease held
  by a process of this host that no longer exists (the dev server killed with SIGKILL) is broken at once; any
  other lease once it expires (`PA_RUN_LEASE_SECONDS`).
- AWS: Lambda retries a crashed run worker invocation (a retry resumes the run once the dead attempt's lease
  expired, which is shorter than the retry delay) and, after the last retry, invokes the run recovery function
  with the failed event: `fail_lost_invocation` ends the run. Nothing sweeps on a schedule there: a periodic
  scan would keep a scale-to-zero database awake for what the retries and the destination already cover.
"""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction, system_transaction
from personal_agent.engine.runner import fail_run
from personal_agent.lifecycle.drivers import start_run
from personal_agent.lifecycle.lease import host_prefix, owner_is_gone
from personal_agent.periodic import Periodic
from personal_agent.runs import store
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger("personal_agent.lifecycle.recovery")


async def recover_unattended(limit: int = 100) -> list[UUID]:
    """Hand every inline run whose worker is gone back to its driver; return the runs handed back."""
    async with system_transaction() as conn:
        rows = await store.unattended_runs(conn, host_prefix(), limit)
    handed: list[UUID] = []
    for row in rows:
        try:
            if await _hand_back(row):
                handed.append(row.run_id)
        except Exception:  # one run that cannot be handed back must not stop the others
            log.exception("could not hand a run back to its driver", extra={"run_id": str(row.run_id)})
    return handed


async def _hand_back(row: store.UnattendedRun) -> bool:
    gone = not row.expired and owner_is_gone(row.lease_owner)
    if not (row.expired or gone):
        return False  # a live process of this host drives it
    async with org_transaction(row.org_id) as conn:
        run = await store.get_run(conn, row.run_id)
        if run is None or not await store.break_lease(conn, row.run_id, row.lease_owner, owner_gone=gone):
            return False  # another driver took it, or it ended, meanwhile
    spec = RunSpec.model_validate(run.spec)
    await start_run(spec)
    log.info("resuming a run whose worker is gone", extra={"run_id": str(spec.run_id)})
    return True


# What the run worker raises when the bus or the database stayed down past PA_DEPENDENCY_RETRY_SECONDS (the Lambda
# runtime names the class in the on-failure record's `responsePayload.errorType`).
OUTAGE_ERRORS = frozenset({"DependencyUnavailable", "BusUnavailable", "UpstashUnavailable"})


def outage_record(record: dict[str, Any]) -> bool:
    """Whether the invocation's last attempt ended on a dependency outage, not a crash or a timeout."""
    response = record.get("responsePayload")
    return isinstance(response, dict) and response.get("errorType") in OUTAGE_ERRORS


async def fail_lost_invocation(record: dict[str, Any]) -> bool:
    """The run worker's on-failure destination: every attempt of the invocation died (or it never ran before its
    event expired). End the run failed `worker_lost` unless another worker holds a live lease on it now. An
    invocation whose attempts all met an outage is not lost: the run, paused at its checkpoint, goes back to its
    driver (a new invocation, with its own retries); while the database is still down this function's own retries
    and then its dead-letter queue keep the record."""
    payload = record["requestPayload"]
    run_id, org_id = UUID(payload["run_id"]), UUID(payload["org_id"])
    context = record.get("requestContext", {})
    async with org_transaction(org_id) as conn:
        row = await store.get_run(conn, run_id)
        if row is None or row.status not in ("queued", "running"):
            return False
        owner = row.lease_owner
        ours = owner is None or owner.startswith(f"lambda:{context.get('requestId')}:")
        if not await store.break_lease(conn, run_id, owner, owner_gone=ours):
            return False
    if outage_record(record):
        await start_run(RunSpec.model_validate(row.spec))
        log.info("resuming a run paused by an outage", extra={"run_id": str(run_id)})
        return False
    tries = context.get("approximateInvokeCount", 0)
    await fail_run(
        run_id,
        org_id,
        "worker_lost",
        f"the run's worker stopped before the run finished ({context.get('condition', 'failed')}, {tries} attempts)",
    )
    return True


async def handle_failure_record(event: dict[str, Any]) -> dict[str, Any]:
    """The run recovery function's one job: an on-failure record of the run worker (anything else is refused,
    so it ends in the DLQ where someone looks)."""
    payload = event.get("requestPayload")
    if not isinstance(payload, dict) or "run_id" not in payload or "org_id" not in payload:
        raise ValueError("not an on-failure record of the run worker")
    return {"run_id": payload["run_id"], "failed": await fail_lost_invocation(event)}


class RecoveryLoop(Periodic):
    """The dev server's sweep: once at `start()`, then every `interval` seconds until `stop()`."""

    def __init__(self, interval: float | None = None) -> None:
        super().__init__(
            "pa-run-recovery", interval or get_settings().run_recovery_interval_seconds, recover_unattended, log
        )
