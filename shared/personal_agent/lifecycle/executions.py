"""The Step Functions client of durable runs: start and stop a run's execution, and let the Task waiting for an
approval go on. Only pointers go in: never content."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from uuid import UUID

from personal_agent import otel_export
from personal_agent.approvals import store as approval_store
from personal_agent.aws_clients import aws_client
from personal_agent.db import org_transaction
from personal_agent.runs import store as run_store
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger("personal_agent.durable")


def sfn_client() -> Any:
    return aws_client("stepfunctions")


def execution_input(spec: RunSpec) -> dict[str, Any]:
    """The state machine's input: the run and org ids, the approval wait and the W3C trace context every step's spans
    go under (`traceparent`: ids only, "" with traces off); nothing else."""
    return {
        "run_id": str(spec.run_id),
        "org_id": str(spec.org_id),
        "approval_timeout_seconds": spec.approval_timeout_seconds,
        "traceparent": otel_export.traceparent(),  # the run's root span, or a sub-agent's parent's step
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
        await run_store.set_execution_arn(conn, spec.run_id, arn)
    return arn


async def stop_execution(org_id: UUID, run_id: UUID, execution_arn: str) -> None:
    """End the run's execution; the engine (or the cancel path for a waiting run) emits the cancelled outcome.

    A Task waiting for an approval (or for its sub-agents) is failed with its token (error `Cancelled`), which its
    Catch sends to `Done`: the same ending on AWS, LocalStack and moto (moto ignores StopExecution during a callback
    wait; LocalStack applies it only once the wait is over, and then ends the execution FAILED). An execution with
    no waiting Task (an engine step runs, or it is between states) is stopped: it ends ABORTED."""
    async with org_transaction(org_id) as conn:
        tokens = await approval_store.take_task_tokens(conn, run_id)
        children_token = await run_store.take_children_token(conn, run_id)  # a parent waiting on sub-agents
    if children_token:
        tokens.add(children_token)

    def _stop() -> None:
        client = sfn_client()
        if _fail_tokens(client, tokens):
            return
        try:
            client.stop_execution(executionArn=execution_arn, error="Cancelled", cause="cancelled by the user")
        except client.exceptions.ExecutionDoesNotExist:
            pass

    await asyncio.to_thread(_stop)


async def release_cancelled_wait(token: str) -> None:
    """A Task that began waiting on a run already cancelled fails at once (error `Cancelled`): the cancel took
    the tokens stored before it, and this one was not stored yet."""
    await asyncio.to_thread(lambda: _fail_tokens(sfn_client(), {token}))


def _fail_tokens(client: Any, tokens: set[str]) -> bool:
    """Fail each waiting Task with `Cancelled`; whether any of them was still waiting."""
    failed = False
    for token in tokens:
        try:
            client.send_task_failure(taskToken=token, error="Cancelled", cause="cancelled by the user")
            failed = True
        except (client.exceptions.TaskTimedOut, client.exceptions.InvalidToken, client.exceptions.TaskDoesNotExist):
            pass
    return failed


async def send_task_success(token: str, run_id: UUID, org_id: UUID) -> None:
    """Let the Task waiting for the run's approvals go on (`continue`); a Task that is gone is only logged."""

    def _send() -> None:
        client = sfn_client()
        output = json.dumps({"run_id": str(run_id), "org_id": str(org_id), "status": "continue"})
        try:
            client.send_task_success(taskToken=token, output=output)
        except (client.exceptions.TaskTimedOut, client.exceptions.InvalidToken, client.exceptions.TaskDoesNotExist):
            log.warning("the waiting task is gone", extra={"run_id": str(run_id)})

    await asyncio.to_thread(_send)
