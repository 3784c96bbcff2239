"""The local durable path: a state machine from infra/statemachines runs in moto (its lambda:invoke Task) and in
LocalStack (its activity Task, polled by the worker in this process), and either way executes a handler from
functions/ in this process."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

from personal_agent.local.aws import STATE_MACHINES_DIR, function_arn, render_asl
from personal_agent.local.lambda_registry import LambdaRegistry
from tests.emulators import Emulator
from tests.sfn import wait_for_execution


def test_smoke_state_machine_invokes_steps_handler_in_process(stack: Any, durable_aws: Emulator) -> None:
    sfn = durable_aws.sfn()
    name = f"smoke-{uuid.uuid4().hex[:8]}"
    before = len(stack.aws.dispatcher.invocations)
    execution = sfn.start_execution(stateMachineArn=durable_aws.state_machines["smoke"], name=name, input="{}")
    result = wait_for_execution(sfn, execution["executionArn"])
    assert result["status"] == "SUCCEEDED", result
    output = json.loads(result["output"])
    assert output == {"ok": True, "action": "ping", "execution": name, "pid": os.getpid()}
    # Other local functions (the knowledge queue's poller) may be dispatched meanwhile: only the steps count here.
    lambda_calls = [call for call in stack.aws.dispatcher.invocations[before:] if call[0] == "pa-steps"]
    if durable_aws.name == "moto":
        assert lambda_calls == [("pa-steps", {"action": "ping", "execution": name})]
    else:  # no Lambda was invoked: the activity's worker ran the handler
        assert lambda_calls == []
        history = sfn.get_execution_history(executionArn=execution["executionArn"])["events"]
        assert "ActivitySucceeded" in {e["type"] for e in history}


def test_a_failing_handler_fails_the_execution_with_its_error_type(stack: Any, durable_aws: Emulator) -> None:
    registry: LambdaRegistry = stack.registry

    def broken(event: dict[str, Any], context: Any) -> dict[str, Any]:
        raise ValueError("boom")

    registry.overrides["pa-broken"] = broken
    subs = durable_aws.substitutions | {"StepsFunctionArn": function_arn("pa-broken")}
    sfn = durable_aws.sfn()
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
