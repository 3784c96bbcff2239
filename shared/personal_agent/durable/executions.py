"""Start and stop the Step Functions execution of a durable run. Only pointers go in: never content."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.runs.spec import RunSpec
from personal_agent.settings import get_settings


def sfn_client() -> Any:
    import boto3

    settings = get_settings()
    return boto3.client("stepfunctions", endpoint_url=settings.aws_endpoint_url, region_name=settings.aws_region)


def execution_input(spec: RunSpec) -> dict[str, Any]:
    """The state machine's input: the run and org ids and the approval wait; nothing else."""
    return {
        "run_id": str(spec.run_id),
        "org_id": str(spec.org_id),
        "approval_timeout_seconds": spec.approval_timeout_seconds,
    }


def _start(spec: RunSpec) -> str:
    settings = get_settings()
    client = sfn_client()
    try:
        # Named after the run: a retried launch cannot start a second execution.
        started = client.start_execution(
            stateMachineArn=settings.state_machine_arn, name=str(spec.run_id), input=json.dumps(execution_input(spec))
        )
        return str(started["executionArn"])
    except client.exceptions.ExecutionAlreadyExists:
        arn = str(settings.state_machine_arn).replace(":stateMachine:", ":execution:")
        return f"{arn}:{spec.run_id}"


async def start_execution(spec: RunSpec) -> str:
    arn = await asyncio.to_thread(_start, spec)
    async with org_transaction(spec.org_id) as conn:
        await conn.execute("UPDATE runs SET execution_arn = %s WHERE id = %s", [arn, spec.run_id])
    return arn


async def stop_execution(org_id: UUID, run_id: UUID, execution_arn: str) -> None:
    """Stop the execution; the engine (or the cancel path for a waiting run) emits the cancelled outcome.

    A Task waiting for an approval token is also failed with its token, so the wait ends at once
    (AWS ignores that after StopExecution; some emulators need it to leave the wait)."""
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            "UPDATE approvals a SET task_token = NULL FROM (SELECT id, task_token FROM approvals"
            " WHERE run_id = %s AND task_token IS NOT NULL FOR UPDATE) old WHERE a.id = old.id"
            " RETURNING old.task_token",
            [run_id],
        )
        tokens = {row["task_token"] for row in await cur.fetchall()}

    def _stop() -> None:
        client = sfn_client()
        try:
            client.stop_execution(executionArn=execution_arn, error="Cancelled", cause="cancelled by the user")
        except client.exceptions.ExecutionDoesNotExist:
            pass
        for token in tokens:
            try:
                client.send_task_failure(taskToken=token, error="Cancelled", cause="cancelled by the user")
            except (client.exceptions.TaskTimedOut, client.exceptions.InvalidToken, client.exceptions.TaskDoesNotExist):
                pass

    await asyncio.to_thread(_stop)
