"""Hand a stored run to its driver: inline (a task here, or the run worker Lambda) or durable (Step Functions)."""

from __future__ import annotations

import asyncio
import json
import logging

from personal_agent.errors import Conflict
from personal_agent.runs.spec import RunMode, RunSpec
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.runs")
_tasks: set[asyncio.Task[None]] = set()


def ensure_driver_available(mode: RunMode) -> None:
    """Refuse a durable run early (409) when no state machine is configured."""
    if mode == "durable" and not get_settings().state_machine_arn:
        raise Conflict("durable runs are not available: no state machine is configured", code="durable_unavailable")


async def run_inline(spec: RunSpec) -> None:
    """Loop the engine to the end in this process; a crash marks the run failed, never leaves it running."""
    from personal_agent.engine.runner import advance, fail_run

    try:
        await advance(spec.run_id, spec.org_id)
    except Exception as exc:
        log.exception("inline run failed", extra={"run_id": str(spec.run_id)})
        await fail_run(spec.run_id, spec.org_id, "internal_error", f"the run failed: {type(exc).__name__}")


async def start_run(spec: RunSpec) -> None:
    settings = get_settings()
    if spec.mode == "durable":
        from personal_agent.durable.launch import start_execution

        await start_execution(spec)
    elif settings.is_local:
        task = asyncio.get_running_loop().create_task(run_inline(spec), name=f"run-{spec.run_id}")
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)
    else:
        await asyncio.to_thread(_invoke_worker, spec)


def _invoke_worker(spec: RunSpec) -> None:
    import boto3

    settings = get_settings()
    client = boto3.client("lambda", endpoint_url=settings.aws_endpoint_url, region_name=settings.aws_region)
    client.invoke(
        FunctionName=settings.run_worker_function,
        InvocationType="Event",
        Payload=json.dumps({"run_id": str(spec.run_id), "org_id": str(spec.org_id)}).encode(),
    )


async def wait_for_local_runs() -> None:
    """Wait for the inline runs this process started (tests, shutdown)."""
    while _tasks:
        await asyncio.gather(*list(_tasks), return_exceptions=True)
