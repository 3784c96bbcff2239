"""The local durable path: a state machine from infra/statemachines runs in moto and its lambda:invoke
Task executes a handler from functions/ in this process."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import boto3

from personal_agent.local.aws import STATE_MACHINES_DIR, function_arn, local_substitutions, render_asl
from personal_agent.local.lambda_registry import LambdaRegistry
from tests.sfn import wait_for_execution


def test_smoke_state_machine_invokes_steps_handler_in_process(stack: Any) -> None:
    sfn = boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    arn = next(sm["stateMachineArn"] for sm in sfn.list_state_machines()["stateMachines"] if sm["name"] == "pa-smoke")
    name = f"smoke-{uuid.uuid4().hex[:8]}"
    before = len(stack.aws.dispatcher.invocations)
    execution = sfn.start_execution(stateMachineArn=arn, name=name, input="{}")
    result = wait_for_execution(sfn, execution["executionArn"])
    assert result["status"] == "SUCCEEDED", result
    output = json.loads(result["output"])
    assert output == {"ok": True, "action": "ping", "execution": name, "pid": os.getpid()}
    assert stack.aws.dispatcher.invocations[before:] == [("pa-steps", {"action": "ping", "execution": name})]


def test_a_failing_handler_fails_the_execution_with_its_error_type(stack: Any) -> None:
    registry: LambdaRegistry = stack.registry

    def broken(event: dict[str, Any], context: Any) -> dict[str, Any]:
        raise ValueError("boom")

    registry.overrides["pa-broken"] = broken
    subs = local_substitutions(registry) | {"StepsFunctionArn": function_arn("pa-broken")}
    sfn = boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    created = sfn.create_state_machine(
        name=f"broken-{uuid.uuid4().hex[:8]}",
        definition=render_asl(STATE_MACHINES_DIR / "smoke.asl.json", subs),
        roleArn="arn:aws:iam::123456789012:role/x",
    )
    execution = sfn.start_execution(stateMachineArn=created["stateMachineArn"], input="{}")
    result = wait_for_execution(sfn, execution["executionArn"])
    assert result["status"] == "FAILED"
    assert result.get("error") == "ValueError"


def test_registry_covers_every_function_the_template_declares(stack: Any) -> None:
    registry: LambdaRegistry = stack.registry
    folders = sorted(p.parent.name for p in (STATE_MACHINES_DIR.parents[1] / "functions").glob("*/app.py"))
    assert registry.names() == sorted("pa-" + f.replace("_", "-") for f in folders)
