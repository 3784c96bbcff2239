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
    """The state machine's input: the run and org ids, nothing else."""
    return {"run_id": str(spec.run_id), "org_id": str(spec.org_id)}


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
    """Stop the execution; the engine (or the stop handler) emits the cancelled outcome."""

    def _stop() -> None:
        client = sfn_client()
        try:
            client.stop_execution(executionArn=execution_arn, error="Cancelled", cause="cancelled by the user")
        except client.exceptions.ExecutionDoesNotExist:
            pass

    await asyncio.to_thread(_stop)
